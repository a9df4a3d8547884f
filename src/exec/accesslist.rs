//! The access-list tracer of `chain_createAccessList` / `eth_createAccessList`: every
//! storage slot a run reads or writes (SLOAD, SSTORE, by the running contract) and every
//! address it looks at or calls (BALANCE, EXTCODESIZE, EXTCODECOPY, EXTCODEHASH,
//! SELFDESTRUCT, and the CALL family), as the reference's `AccessListTracer` records them:
//! addresses leave out the sender, the recipient and the precompiles; slots are kept
//! whoever owns them (the recipient's included, with its address).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use revm::bytecode::opcode;
use revm::interpreter::interpreter::EthInterpreter;
use revm::interpreter::interpreter_types::{InputsTr, Jumps};
use revm::interpreter::Interpreter;
use revm::primitives::U256 as RU256;
use revm::Inspector;

use crate::crypto::Address;
use crate::types::transaction::AccessTuple;

/// The precompiled contracts the reference leaves out of an access list: its Cancun set
/// (0x01-0x0a and its own 0x3fd, 0x3fe, 0x3ff) and 0x0a, 0x0b, which it keeps for contracts
/// of VM version 0.
pub const PRECOMPILES: [u16; 14] = [
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x3fd, 0x3fe, 0x3ff,
];

fn precompile(n: u16) -> Address {
    let mut a = [0u8; 20];
    a[18..].copy_from_slice(&n.to_be_bytes());
    Address(a)
}

/// Records what a run touches, from an initial list.
#[derive(Debug, Clone)]
pub struct AccessListTracer {
    excluded: HashSet<Address>,
    /// Address -> slots, ordered so that the list reads the same at every run.
    list: BTreeMap<Address, BTreeSet<[u8; 32]>>,
}

impl AccessListTracer {
    /// A tracer starting from `initial` (its addresses but `from`, `to` and the precompiles;
    /// every slot, with its address), leaving out `from`, `to` and the precompiles from then
    /// on.
    pub fn new(initial: &[AccessTuple], from: Address, to: Address) -> AccessListTracer {
        let mut excluded: HashSet<Address> = PRECOMPILES.iter().map(|&n| precompile(n)).collect();
        excluded.insert(from);
        excluded.insert(to);
        let mut t = AccessListTracer {
            excluded,
            list: BTreeMap::new(),
        };
        for entry in initial {
            t.add_address(entry.address);
            for slot in &entry.storage_keys {
                t.add_slot(entry.address, *slot);
            }
        }
        t
    }

    fn add_address(&mut self, address: Address) {
        if !self.excluded.contains(&address) {
            self.list.entry(address).or_default();
        }
    }

    fn add_slot(&mut self, address: Address, slot: [u8; 32]) {
        self.list.entry(address).or_default().insert(slot);
    }

    /// The list recorded so far, addresses and slots in ascending order.
    pub fn access_list(&self) -> Vec<AccessTuple> {
        self.list
            .iter()
            .map(|(address, slots)| AccessTuple {
                address: *address,
                storage_keys: slots.iter().copied().collect(),
            })
            .collect()
    }

    /// Whether two tracers recorded the same addresses and slots.
    pub fn same_list(&self, other: &AccessListTracer) -> bool {
        self.list == other.list
    }
}

fn address_of(word: &RU256) -> Address {
    let bytes = word.to_be_bytes::<32>();
    Address(bytes[12..].try_into().expect("20 bytes"))
}

impl<CTX> Inspector<CTX, EthInterpreter> for AccessListTracer {
    fn step(&mut self, interp: &mut Interpreter<EthInterpreter>, _: &mut CTX) {
        let op = interp.bytecode.opcode();
        let stack = interp.stack.data();
        let n = stack.len();
        match op {
            opcode::SLOAD | opcode::SSTORE if n >= 1 => {
                let contract = Address(interp.input.target_address().0 .0);
                self.add_slot(contract, stack[n - 1].to_be_bytes::<32>());
            }
            opcode::EXTCODECOPY
            | opcode::EXTCODEHASH
            | opcode::EXTCODESIZE
            | opcode::BALANCE
            | opcode::SELFDESTRUCT
                if n >= 1 =>
            {
                self.add_address(address_of(&stack[n - 1]));
            }
            opcode::DELEGATECALL | opcode::CALL | opcode::STATICCALL | opcode::CALLCODE
                if n >= 5 =>
            {
                self.add_address(address_of(&stack[n - 2]));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::fixtures::{env, rich_world};
    use crate::exec::{call, create_address, Message, StateSource};

    const AA: Address = Address([0xaa; 20]);
    const BB: Address = Address([0xbb; 20]);

    /// Creation code that writes slot 5, reads slot 7, looks at 0xaa..aa's balance, at the
    /// precompile 0x01's code size and at its sender's balance, and calls 0xbb..bb.
    fn toucher(from: &Address) -> Vec<u8> {
        let hex = |h: &str| hex::decode(h).unwrap();
        [
            hex("6001600555"), // SSTORE(5, 1)
            hex("60075450"),   // SLOAD(7) POP
            hex("73"),
            AA.0.to_vec(),
            hex("3150"),     // BALANCE(0xaa..aa) POP
            hex("60013b50"), // EXTCODESIZE(0x01) POP
            hex("73"),
            from.0.to_vec(),
            hex("3150"),                 // BALANCE(from) POP
            hex("60006000600060006000"), // retLen retOffset argsLen argsOffset value
            hex("73"),
            BB.0.to_vec(),
            hex("61fffff15000"), // gas 0xffff, CALL, POP, STOP
        ]
        .concat()
    }

    fn word(n: u8) -> [u8; 32] {
        let mut w = [0u8; 32];
        w[31] = n;
        w
    }

    #[test]
    fn it_records_slots_and_addresses_but_not_the_excluded_ones() {
        let from = Address([0x11; 20]);
        let (store, root) = rich_world(from);
        let created = create_address(&from, 0);
        let run = |list: Vec<AccessTuple>| {
            let msg = Message {
                from,
                to: None,
                gas: 1_000_000,
                gas_price: 0,
                value: [0; 32],
                input: toucher(&from),
                access_list: list.clone(),
            };
            let source = StateSource::new(&store, root, |_| None);
            let (out, t) = call(
                env(1),
                source,
                &msg,
                AccessListTracer::new(&list, from, created),
            );
            let out = out.unwrap();
            assert!(out.succeeded(), "{out:?}");
            (out.receipt.gas_used, t)
        };
        let (plain_gas, first) = run(Vec::new());
        let want = vec![
            AccessTuple {
                address: AA,
                storage_keys: vec![],
            },
            AccessTuple {
                address: BB,
                storage_keys: vec![],
            },
            AccessTuple {
                address: created,
                storage_keys: vec![word(5), word(7)],
            },
        ];
        let mut sorted = want.clone();
        sorted.sort_by_key(|t| t.address.0);
        assert_eq!(first.access_list(), sorted);

        // Run again with the list: the same list (stable), and the gas EIP-2929/2930 give:
        // 3 addresses x 2,400 + 2 keys x 1,900 up front, against the cold surcharges saved
        // (SSTORE 2,100; SLOAD 2,100 - 100; BALANCE and CALL 2,600 - 100 each).
        let (listed_gas, second) = run(first.access_list());
        assert!(second.same_list(&first));
        assert_eq!(
            listed_gas as i64 - plain_gas as i64,
            (3 * 2_400 + 2 * 1_900) - (2_100 + 2_000 + 2_500 + 2_500)
        );
    }

    #[test]
    fn an_initial_list_keeps_its_slots_even_for_excluded_addresses() {
        let from = Address([0x11; 20]);
        let to = Address([0x22; 20]);
        let t = AccessListTracer::new(
            &[
                AccessTuple {
                    address: from,
                    storage_keys: vec![],
                },
                AccessTuple {
                    address: to,
                    storage_keys: vec![word(3)],
                },
                AccessTuple {
                    address: precompile(0x3ff),
                    storage_keys: vec![],
                },
            ],
            from,
            to,
        );
        assert_eq!(
            t.access_list(),
            vec![AccessTuple {
                address: to,
                storage_keys: vec![word(3)],
            }]
        );
    }
}
