// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title Counter
/// @notice Counts calls to increment(); each call emits the new count and the caller.
contract Counter {
    uint256 public count;

    event Incremented(uint256 newCount, address by);

    function increment() external returns (uint256) {
        count += 1;
        emit Incremented(count, msg.sender);
        return count;
    }

    function get() external view returns (uint256) {
        return count;
    }
}

/// @title Caller
/// @notice Calls a Counter from a contract, so a single transaction has an
///         inner call and logs from two addresses (Counter's, then Caller's).
contract Caller {
    Counter public immutable counter;

    event CalledIncrement(address indexed counter, uint256 newCount);

    constructor(Counter counter_) {
        counter = counter_;
    }

    function callIncrement() external returns (uint256) {
        uint256 newCount = counter.increment();
        emit CalledIncrement(address(counter), newCount);
        return newCount;
    }

    function callGet() external view returns (uint256) {
        return counter.get();
    }
}
