//! A global allocator that overwrites every block with zeros before it goes back to the
//! system allocator, so that no freed buffer keeps a passphrase or a key.
//!
//! Why: our own buffers are `Zeroizing`, but requests also pass through buffers that other
//! crates own and free without wiping (tungstenite unmasks a WebSocket frame in its read
//! buffer and hands the message over as shared `Bytes`; a decoder's scratch space). A scan of
//! chaind's memory after WebSocket calls found the passphrase three times. Wiping at the one
//! place all of them go through catches every such copy. The binaries install it with
//! `#[global_allocator]`. Cost: one `memset` per freed byte, measured in PERFORMANCE.md.
//!
//! The stack is the other place copies hide: [`wipe_stack`] clears what a key derivation or a
//! method given a secret left below its caller's frame.

use std::alloc::{GlobalAlloc, Layout, System};

/// Overwrites with zeros 64 KiB of the stack below the caller's frame: where a function it
/// called kept secrets (moved-from copies of a key, a KDF's key block) that no `Drop` reaches.
#[inline(never)]
pub fn wipe_stack() {
    let mut area = [0u8; 64 * 1024];
    // SAFETY: `area` is a local array of that length.
    unsafe { wipe(area.as_mut_ptr(), area.len()) };
    std::hint::black_box(&area);
}

/// The system allocator, wiping blocks when they are freed or moved by a reallocation.
pub struct WipingAllocator;

/// Overwrites `len` bytes at `p` with zeros in a way the compiler cannot drop as a store
/// to memory about to be freed.
///
/// # Safety
/// `p` must be valid for writes of `len` bytes.
unsafe fn wipe(p: *mut u8, len: usize) {
    // SAFETY: the caller's promise.
    unsafe { std::ptr::write_bytes(p, 0, len) };
    // An empty asm block that may read the memory at `p`: the stores above must happen.
    // SAFETY: the block does nothing.
    unsafe { std::arch::asm!("/* {0} */", in(reg) p, options(nostack, preserves_flags)) };
}

// SAFETY: every method forwards to `System` with the same layout; the block is only written
// (within its size) before it is given back.
unsafe impl GlobalAlloc for WipingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as received.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as received.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` is a live block of `layout.size()` bytes until the call below.
        unsafe {
            wipe(ptr, layout.size());
            System.dealloc(ptr, layout)
        }
    }

    /// A new block, the contents copied, the old one wiped and freed: the system's realloc
    /// could move the block and free the old one unwiped.
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the layout is valid (same alignment, the size checked by the caller).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: forwarded; on success both blocks are live and at least min(size) long.
        unsafe {
            let new = System.alloc(new_layout);
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                wipe(ptr, layout.size());
                System.dealloc(ptr, layout);
            }
            new
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_contents_through_realloc() {
        let a = WipingAllocator;
        let layout = Layout::from_size_align(16, 8).unwrap();
        // SAFETY: a fresh block used within its size, freed once.
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            for i in 0..16 {
                *p.add(i) = i as u8;
            }
            let q = a.realloc(p, layout, 64);
            assert!(!q.is_null());
            let got: Vec<u8> = (0..16).map(|i| *q.add(i)).collect();
            assert_eq!(got, (0..16).collect::<Vec<u8>>());
            a.dealloc(q, Layout::from_size_align(64, 8).unwrap());
        }
    }
}
