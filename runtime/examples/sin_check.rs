//! Compares `skelpack_runtime::sin::sin` with the platform's `sinf` for every `f32` below
//! 120 in magnitude (both signs, about 2.2e9 inputs; under a minute): on x86-64 Linux with
//! glibc 2.28+ and an FMA CPU every one must be equal bit for bit.
//!
//!     cargo run --release -p skelpack-runtime --example sin_check

use skelpack_runtime::sin::sin;

fn main() {
    let end = 120.0f32.to_bits();
    let mut differ = 0u64;
    for bits in 0..end {
        for y in [f32::from_bits(bits), -f32::from_bits(bits)] {
            if sin(y).to_bits() != y.sin().to_bits() {
                if differ < 10 {
                    eprintln!("sin({y:e}): {:e}, platform {:e}", sin(y), y.sin());
                }
                differ += 1;
            }
        }
    }
    println!(
        "{} inputs, {differ} differ from the platform's sinf",
        2 * end as u64
    );
    std::process::exit(i32::from(differ > 0));
}
