// SPDX-License-Identifier: BSD-2-Clause
//! rust_target: Rust functions whose names must come out demangled, built
//! twice: with rustc's legacy mangling and with v0.
//!
//!   rust_target [SECONDS]
//!
//! Burns CPU for SECONDS (default 1) in rust_target::inner::hot_loop and
//! rust_target::Counter::step, both out of line, called from main.
use std::ptr::{read_volatile, write_volatile};
use std::time::{Duration, Instant};

static mut SINK: u64 = 0;
static mut WORK: u64 = 1 << 16;

fn work() -> u64 {
    unsafe { read_volatile(&*std::ptr::addr_of!(WORK)) }
}

fn sink(x: u64) {
    unsafe { write_volatile(&mut *std::ptr::addr_of_mut!(SINK), x) }
}

pub mod inner {
    #[inline(never)]
    pub fn hot_loop(n: u64) -> u64 {
        let mut x = 0u64;
        for i in 0..n {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        super::sink(x);
        x
    }
}

pub struct Counter {
    v: u64,
}

impl Counter {
    #[inline(never)]
    pub fn step(&mut self, n: u64) -> u64 {
        for i in 0..n {
            self.v ^= self.v << 7 ^ self.v >> 9 ^ i;
        }
        sink(self.v);
        self.v
    }
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut c = Counter { v: 3 };
    while Instant::now() < end {
        inner::hot_loop(work());
        c.step(work());
    }
}
