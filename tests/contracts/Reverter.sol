// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title Reverter
/// @notice Every way a call can fail, for receipts, eth_call and gas
///         estimation tests, plus a storage slot for state-at-older-block tests.
contract Reverter {
    /// Custom error: revert data is its 4-byte selector then the ABI-encoded arguments.
    error Custom(uint256 code, string why);

    uint256 private value;
    uint256 private sink;

    event Stored(uint256 value);

    /// Reverts with Error(string) "nope: reverted on purpose".
    function revertWithReason() external pure {
        revert("nope: reverted on purpose");
    }

    /// Reverts with the custom error Custom(42, "custom").
    function revertCustom() external pure {
        revert Custom(42, "custom");
    }

    /// Never returns: writes storage in an endless loop until the gas runs out.
    function burnGas() external {
        for (uint256 i = 0; ; i++) {
            sink = i;
        }
    }

    /// Fails an assert: reverts with Panic(uint256) code 0x01.
    function assertFail() external pure {
        assert(false);
    }

    /// Stores a value, so a later block can be compared with an older one.
    function store(uint256 v) external {
        value = v;
        emit Stored(v);
    }

    function stored() external view returns (uint256) {
        return value;
    }
}
