//! The start-up arena (Linux with glibc): the first allocations of the process are bumped out
//! of one static block instead of glibc's `malloc`.
//!
//! A one-shot `list` makes about 700 allocations, most while the argument parser is built
//! (about 80 options, each with its texts), and glibc's `malloc`, `realloc` and `free` took
//! 290,000 of its 1.0 million instructions (callgrind). Here an allocation is an aligned bump
//! of an atomic offset; a free gives the space back only when it is the last block handed out
//! (the usual case for temporaries), else leaves it; a `realloc` of the last block grows it in
//! place. Once the block is used up, and for any allocation larger than [`LARGE`], the
//! system allocator serves as before, so a long run (a console, `--follow`, a million-command
//! batch) wastes at most the block's [`SIZE`] on space freed out of order in its first moments.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The block's size: a one-shot allocates about 120 KiB.
const SIZE: usize = 256 * 1024;
/// Larger allocations (read buffers, a batch file's text) go to the system allocator.
const LARGE: usize = 8 * 1024;

#[repr(C, align(4096))]
struct Block(UnsafeCell<[u8; SIZE]>);

/// The global allocator of the glibc Linux build (see the module text).
pub struct Arena {
    block: Block,
    /// The offset of the first byte not handed out.
    top: AtomicUsize,
}

// SAFETY: the block is only handed out in disjoint ranges, each claimed by one atomic update
// of `top`; nothing reads it through the `Arena` itself.
unsafe impl Sync for Arena {}

impl Arena {
    /// An empty arena (a zeroed static: it takes no memory until used).
    pub const fn new() -> Self {
        Arena {
            block: Block(UnsafeCell::new([0; SIZE])),
            top: AtomicUsize::new(0),
        }
    }

    fn base(&self) -> *mut u8 {
        self.block.0.get().cast::<u8>()
    }

    /// `ptr`'s offset in the block, when the block holds it.
    fn offset(&self, ptr: *mut u8) -> Option<usize> {
        let at = (ptr as usize).wrapping_sub(self.base() as usize);
        (at < SIZE).then_some(at)
    }

    /// A range of `layout` from the block, or `None` when it does not fit.
    fn bump(&self, layout: Layout) -> Option<*mut u8> {
        if layout.size() > LARGE {
            return None;
        }
        let base = self.base() as usize;
        let mut top = self.top.load(Ordering::Relaxed);
        loop {
            let start = (base + top).next_multiple_of(layout.align()) - base;
            let end = start + layout.size();
            if end > SIZE {
                return None;
            }
            match self
                .top
                .compare_exchange_weak(top, end, Ordering::Relaxed, Ordering::Relaxed)
            {
                // SAFETY: `start < end <= SIZE`: inside the block.
                Ok(_) => return Some(unsafe { self.base().add(start) }),
                Err(now) => top = now,
            }
        }
    }
}

impl Default for Arena {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every pointer returned is either a range of the block no other live allocation
// overlaps (claimed by `bump`, given back only by the one free or realloc of its owner) or
// the system allocator's; each is freed or resized by whichever gave it.
unsafe impl GlobalAlloc for Arena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.bump(layout) {
            Some(ptr) => ptr,
            // SAFETY: the caller's layout, as given.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match self.bump(layout) {
            // SAFETY: a fresh range of `layout.size()` bytes; it may hold a freed block's bytes.
            Some(ptr) => unsafe {
                ptr.write_bytes(0, layout.size());
                ptr
            },
            // SAFETY: the caller's layout, as given.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match self.offset(ptr) {
            // The last block handed out: the space is free again.
            Some(at) => {
                let _ = self.top.compare_exchange(
                    at + layout.size(),
                    at,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
            }
            // SAFETY: the system allocator gave it, with this layout.
            None => unsafe { System.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Some(at) = self.offset(ptr) else {
            // SAFETY: the system allocator gave it, with this layout.
            return unsafe { System.realloc(ptr, layout, new_size) };
        };
        if new_size <= layout.size() {
            return ptr;
        }
        // The last block handed out grows in place while the block has room.
        if at + new_size <= SIZE
            && new_size <= LARGE
            && self
                .top
                .compare_exchange(
                    at + layout.size(),
                    at + new_size,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
        {
            return ptr;
        }
        // SAFETY: `new_size` is non-zero and, rounded up to the alignment, does not overflow
        // (the caller's promise for `realloc`).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: as for `alloc`.
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both ranges are live, distinct and at least `layout.size()` long.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size());
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_disjoint_and_fall_back_when_full() {
        let arena = Box::leak(Box::new(Arena::new()));
        let small = Layout::from_size_align(24, 8).unwrap();
        let wide = Layout::from_size_align(64, 64).unwrap();
        // SAFETY: layouts of non-zero size; each pointer freed with its own layout.
        unsafe {
            let a = arena.alloc(small);
            let b = arena.alloc(wide);
            assert_eq!(b as usize % 64, 0);
            assert!(b as usize >= a as usize + 24);
            a.write_bytes(1, 24);
            b.write_bytes(2, 64);
            assert_eq!(*a.add(23), 1);
            // The last block grows in place; an earlier one moves and keeps its bytes.
            let b2 = arena.realloc(b, wide, 128);
            assert_eq!(b2, b);
            let a2 = arena.realloc(a, small, 48);
            assert_ne!(a2, a);
            assert_eq!(*a2.add(23), 1);
            // Freeing the last block gives its space back.
            arena.dealloc(a2, Layout::from_size_align(48, 8).unwrap());
            let c = arena.alloc_zeroed(Layout::from_size_align(48, 8).unwrap());
            assert_eq!(c, a2);
            assert!((0..48).all(|i| *c.add(i) == 0));
            // Large and out-of-room allocations come from the system allocator.
            let large = Layout::from_size_align(LARGE + 1, 8).unwrap();
            let l = arena.alloc(large);
            assert!(arena.offset(l).is_none());
            arena.dealloc(l, large);
            let chunk = Layout::from_size_align(LARGE, 8).unwrap();
            let mut last = std::ptr::null_mut();
            for _ in 0..SIZE / LARGE + 1 {
                last = arena.alloc(chunk);
            }
            assert!(arena.offset(last).is_none());
            arena.dealloc(last, chunk);
        }
    }
}
