// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title Child
/// @notice The small contract that Factory deploys with CREATE2.
///
/// selfdestruct and EIP-6780 (Cancun): SELFDESTRUCT only removes the
/// account's code and storage when it runs in the same transaction that
/// created the contract. Called later, it only sends the whole balance to
/// the beneficiary and the code stays. Before Cancun it always removed
/// the account. The bytecode is the same either way (built for Shanghai);
/// what happens depends on the hardfork of the chain that runs it.
contract Child {
    address public immutable factory;

    constructor() payable {
        factory = msg.sender;
    }

    receive() external payable {}

    function hello() external pure returns (uint256) {
        return 42;
    }

    /// Sends the balance to `to`; removes the account only in the creating
    /// transaction (EIP-6780), see above.
    function destroy(address payable to) external {
        selfdestruct(to);
    }
}

/// @title Ephemeral
/// @notice Destroys itself in its constructor: created and destroyed in the
///         same transaction, so even under EIP-6780 no code is left at its
///         address and the value sent along goes to `to`.
contract Ephemeral {
    constructor(address payable to) payable {
        selfdestruct(to);
    }
}

/// @title Factory
/// @notice Deploys Child with CREATE2, so its address is known in advance.
contract Factory {
    event Deployed(address child);

    /// Deploys a Child at the address predict(salt) gives.
    function deploy(bytes32 salt) external payable returns (address) {
        Child child = new Child{salt: salt, value: msg.value}();
        emit Deployed(address(child));
        return address(child);
    }

    /// Deploys a Child and destroys it in the same transaction: the account is
    /// removed (EIP-6780), and the same salt can be deployed again later.
    function deployAndDestroy(bytes32 salt, address payable to) external payable returns (address) {
        Child child = new Child{salt: salt, value: msg.value}();
        emit Deployed(address(child));
        child.destroy(to);
        return address(child);
    }

    /// The CREATE2 address: keccak256(0xff ++ factory ++ salt ++ keccak256(initcode))[12:].
    function predict(bytes32 salt) public view returns (address) {
        bytes32 hash = keccak256(
            abi.encodePacked(bytes1(0xff), address(this), salt, keccak256(type(Child).creationCode))
        );
        return address(uint160(uint256(hash)));
    }
}
