//! The digits of π (Machin's formula over a small fixed-point bignum), as `Math::BigFloat`'s
//! `bpi(N)` returns them: N significant digits, rounded half to even.

/// Most digits computed (larger requests are answered with this many).
pub const MAX_DIGITS: usize = 30_000;

const BASE: u64 = 1_000_000_000;

/// A non-negative fixed-point number: `limbs[0]` is the integer part, then base-1e9 fractions.
#[derive(Clone)]
struct Fixed {
    limbs: Vec<u64>,
}

impl Fixed {
    fn zero(n: usize) -> Fixed {
        Fixed { limbs: vec![0; n] }
    }

    fn is_zero(&self) -> bool {
        self.limbs.iter().all(|&l| l == 0)
    }

    /// self /= d (d < 2^32).
    fn div_small(&mut self, d: u64) {
        let mut rem = 0u64;
        for l in self.limbs.iter_mut() {
            let cur = rem * BASE + *l;
            *l = cur / d;
            rem = cur % d;
        }
    }

    fn add(&mut self, o: &Fixed) {
        let mut carry = 0;
        for i in (0..self.limbs.len()).rev() {
            let s = self.limbs[i] + o.limbs[i] + carry;
            self.limbs[i] = s % BASE;
            carry = s / BASE;
        }
    }

    fn sub(&mut self, o: &Fixed) {
        let mut borrow = 0i64;
        for i in (0..self.limbs.len()).rev() {
            let mut s = self.limbs[i] as i64 - o.limbs[i] as i64 - borrow;
            if s < 0 {
                s += BASE as i64;
                borrow = 1;
            } else {
                borrow = 0;
            }
            self.limbs[i] = s as u64;
        }
    }

    fn mul_small(&mut self, m: u64) {
        let mut carry = 0;
        for i in (0..self.limbs.len()).rev() {
            let s = self.limbs[i] * m + carry;
            self.limbs[i] = s % BASE;
            carry = s / BASE;
        }
    }
}

/// atan(1/x) to `n` limbs.
fn atan_inv(x: u64, n: usize) -> Fixed {
    let mut sum = Fixed::zero(n);
    let mut power = Fixed::zero(n);
    power.limbs[0] = 1;
    power.div_small(x);
    let x2 = x * x;
    let mut k = 0u64;
    loop {
        let mut term = power.clone();
        term.div_small(2 * k + 1);
        if term.is_zero() {
            break;
        }
        if k.is_multiple_of(2) {
            sum.add(&term);
        } else {
            sum.sub(&term);
        }
        power.div_small(x2);
        k += 1;
    }
    sum
}

/// π's decimal digits after the point, `n` of them (truncated, exact).
fn pi_fraction_digits(n: usize) -> String {
    let limbs = n / 9 + 4;
    let mut a = atan_inv(5, limbs);
    a.mul_small(16);
    let mut b = atan_inv(239, limbs);
    b.mul_small(4);
    a.sub(&b);
    let mut s = String::with_capacity(limbs * 9);
    for l in &a.limbs[1..] {
        s.push_str(&format!("{l:09}"));
    }
    s.truncate(n);
    s
}

/// `bpi(n)`: π to `n` significant digits (`3.14159…`), rounded half to even; `n` = 1 gives `3`.
pub fn bpi(n: usize) -> String {
    let n = n.clamp(1, MAX_DIGITS);
    let guard = 24;
    let frac = pi_fraction_digits(n - 1 + guard);
    let mut digits: Vec<u8> = std::iter::once(3u8).chain(frac.bytes().map(|b| b - b'0')).collect();
    let next = digits[n];
    let rest_nonzero = digits[n + 1..].iter().any(|&d| d != 0);
    let round_up = next > 5 || (next == 5 && (rest_nonzero || digits[n - 1] % 2 == 1));
    digits.truncate(n);
    if round_up {
        let mut i = n;
        while i > 0 {
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let mut s = String::with_capacity(n + 1);
    s.push((b'0' + digits[0]) as char);
    if n > 1 {
        s.push('.');
        for d in &digits[1..] {
            s.push((b'0' + d) as char);
        }
    }
    s
}

/// CPU milliseconds perl's pure-Perl `Math::BigFloat::bpi` takes for `n` digits (about 6 s for
/// 2000 digits, quadratic).
pub fn bpi_cpu_ms(n: usize) -> u64 {
    let n = n.min(MAX_DIGITS) as u64;
    (6_000 * n * n / (2000 * 2000)).max(15)
}
