"""Arithmetic and number theory function tasks."""

from ..problems import fn

TOPIC = "math"

PROBLEMS = [
    fn(
        "factorial", 0.1,
        "Return `n!` for `n >= 0`.",
        examples=[((5,), 120), ((0,), 1)],
        tests=[((1,), 1), ((10,), 3628800), ((3,), 6), ((20,), 2432902008176640000)],
        ref='''
        def factorial(n: int) -> int:
            out = 1
            for k in range(2, n + 1):
                out *= k
            return out
        ''',
        gen="return (rng.randint(0, 30),)",
    ),
    fn(
        "fibonacci", 0.15,
        "Return the `n`-th Fibonacci number, with `F(0) = 0` and `F(1) = 1` (`0 <= n <= 90`).",
        examples=[((10,), 55), ((1,), 1)],
        tests=[((0,), 0), ((2,), 1), ((30,), 832040), ((50,), 12586269025)],
        ref='''
        def fibonacci(n: int) -> int:
            a, b = 0, 1
            for _ in range(n):
                a, b = b, a + b
            return a
        ''',
        gen="return (rng.randint(0, 90),)",
    ),
    fn(
        "is_prime", 0.2,
        "Return `True` if the integer `n` is a prime number (any `n`, including zero and "
        "negatives, which are not prime; `n` is at most about a million).",
        examples=[((7,), True), ((9,), False)],
        tests=[((1,), False), ((2,), True), ((0,), False), ((-7,), False), ((97,), True),
               ((7919,), True), ((7917,), False), ((49,), False), ((4,), False), ((10403,), False)],
        ref='''
        def is_prime(n: int) -> bool:
            if n < 2:
                return False
            k = 2
            while k * k <= n:
                if n % k == 0:
                    return False
                k += 1
            return True
        ''',
        gen='''
        p, q = rng.choice([2, 3, 5, 7, 11, 13, 31, 97, 101, 997]), rng.choice([2, 3, 7, 101, 997])
        return (rng.choice([rng.randint(-5, 100), rng.randint(100, 10**6), p * p, p * q]),)
        ''',
    ),
    fn(
        "gcd", 0.1,
        "Return the greatest common divisor of the non-negative integers `a` and `b` "
        "(`gcd(0, 0) = 0`).",
        examples=[((12, 18), 6), ((7, 5), 1)],
        tests=[((0, 5), 5), ((0, 0), 0), ((100, 75), 25), ((17, 17), 17)],
        ref='''
        def gcd(a: int, b: int) -> int:
            while b:
                a, b = b, a % b
            return a
        ''',
        gen="return (rng.randint(0, 1000) * rng.randint(1, 5), rng.randint(0, 1000))",
    ),
    fn(
        "lcm_list", 0.3,
        "Return the least common multiple of the positive integers in `xs` (1 for an empty list).",
        examples=[(([4, 6],), 12), (([],), 1)],
        tests=[(([5],), 5), (([2, 3, 4],), 12), (([7, 11, 13],), 1001), (([6, 10, 15],), 30)],
        ref='''
        from math import gcd

        def lcm_list(xs: list[int]) -> int:
            out = 1
            for x in xs:
                out = out * x // gcd(out, x)
            return out
        ''',
        gen="return (ints(rng, rng.randint(0, 6), 1, 30),)",
    ),
    fn(
        "digit_sum", 0.05,
        "Return the sum of the decimal digits of `abs(n)`.",
        examples=[((123,), 6), ((-45,), 9)],
        tests=[((0,), 0), ((9999,), 36), ((1000000,), 1)],
        ref='''
        def digit_sum(n: int) -> int:
            return sum(int(d) for d in str(abs(n)))
        ''',
        gen="return (rng.randint(-10**9, 10**9),)",
    ),
    fn(
        "reverse_integer", 0.15,
        "Reverse the decimal digits of `n`, keeping its sign (leading zeros of the result vanish).",
        examples=[((123,), 321), ((-120,), -21)],
        tests=[((0,), 0), ((5,), 5), ((1000,), 1), ((-9,), -9)],
        ref='''
        def reverse_integer(n: int) -> int:
            r = int(str(abs(n))[::-1])
            return -r if n < 0 else r
        ''',
        gen="return (rng.randint(-10**6, 10**6),)",
    ),
    fn(
        "prime_factors", 0.3,
        "Return the prime factors of `n >= 1` in ascending order, repeated by multiplicity "
        "(an empty list for 1).",
        examples=[((12,), [2, 2, 3]), ((13,), [13])],
        tests=[((1,), []), ((2,), [2]), ((360,), [2, 2, 2, 3, 3, 5]), ((9973,), [9973]),
               ((1001,), [7, 11, 13])],
        ref='''
        def prime_factors(n: int) -> list[int]:
            out = []
            k = 2
            while k * k <= n:
                while n % k == 0:
                    out.append(k)
                    n //= k
                k += 1
            if n > 1:
                out.append(n)
            return out
        ''',
        gen="return (rng.randint(1, 10**6),)",
    ),
    fn(
        "to_binary", 0.15,
        "Return the binary representation of the non-negative integer `n`, without a prefix.",
        examples=[((5,), "101"), ((0,), "0")],
        tests=[((1,), "1"), ((255,), "11111111"), ((1024,), "10000000000")],
        ref='''
        def to_binary(n: int) -> str:
            return format(n, "b")
        ''',
        gen="return (rng.randint(0, 10**6),)",
    ),
    fn(
        "from_base", 0.3,
        "Parse `s`, a non-empty string of digits `0-9` and lower-case letters `a-z` (worth 10 to "
        "35), as a number in base `base` (2 to 36) and return its value.",
        examples=[(("ff", 16), 255), (("101", 2), 5)],
        tests=[(("0", 10), 0), (("z", 36), 35), (("777", 8), 511), (("10", 36), 36)],
        ref='''
        def from_base(s: str, base: int) -> int:
            value = 0
            for c in s:
                value = value * base + "0123456789abcdefghijklmnopqrstuvwxyz".index(c)
            return value
        ''',
        gen='''
        base = rng.randint(2, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[:base]
        return (word(rng, 1, 8, digits), base)
        ''',
    ),
    fn(
        "to_roman", 0.35,
        "Return the Roman numeral for `1 <= n <= 3999` (subtractive notation: IV, IX, XL, XC, "
        "CD, CM).",
        examples=[((4,), "IV"), ((1994,), "MCMXCIV")],
        tests=[((1,), "I"), ((3999,), "MMMCMXCIX"), ((58,), "LVIII"), ((40,), "XL"), ((900,), "CM")],
        ref='''
        def to_roman(n: int) -> str:
            table = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
                     (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
            out = []
            for value, symbol in table:
                while n >= value:
                    out.append(symbol)
                    n -= value
            return "".join(out)
        ''',
        gen="return (rng.randint(1, 3999),)",
    ),
    fn(
        "is_perfect", 0.25,
        "Return `True` if the positive integer `n` equals the sum of its proper divisors "
        "(the divisors smaller than `n`).",
        examples=[((6,), True), ((8,), False)],
        tests=[((1,), False), ((28,), True), ((496,), True), ((12,), False), ((8128,), True)],
        ref='''
        def is_perfect(n: int) -> bool:
            return n > 1 and sum(d for d in range(1, n // 2 + 1) if n % d == 0) == n
        ''',
        gen="return (rng.choice([6, 28, 496, rng.randint(1, 10000)]),)",
    ),
    fn(
        "collatz_steps", 0.2,
        "Return how many steps the Collatz process takes to reach 1 from `n >= 1` (a step maps "
        "even `n` to `n / 2` and odd `n` to `3n + 1`).",
        examples=[((6,), 8), ((1,), 0)],
        tests=[((2,), 1), ((7,), 16), ((27,), 111)],
        ref='''
        def collatz_steps(n: int) -> int:
            steps = 0
            while n != 1:
                n = n // 2 if n % 2 == 0 else 3 * n + 1
                steps += 1
            return steps
        ''',
        gen="return (rng.randint(1, 10**5),)",
    ),
    fn(
        "pascal_row", 0.25,
        "Return row `n` (0-based) of Pascal's triangle.",
        examples=[((0,), [1]), ((4,), [1, 4, 6, 4, 1])],
        tests=[((1,), [1, 1]), ((2,), [1, 2, 1]), ((6,), [1, 6, 15, 20, 15, 6, 1])],
        ref='''
        def pascal_row(n: int) -> list[int]:
            row = [1]
            for _ in range(n):
                row = [a + b for a, b in zip([0] + row, row + [0])]
            return row
        ''',
        gen="return (rng.randint(0, 30),)",
    ),
    fn(
        "integer_sqrt", 0.3,
        "Return the largest integer `r` with `r * r <= n`, for any non-negative integer `n` "
        "(which may be far larger than a float can hold exactly).",
        examples=[((17,), 4), ((16,), 4)],
        tests=[((0,), 0), ((1,), 1), ((10**20,), 10**10), ((99,), 9), ((2**64,), 2**32),
               ((10**40 - 1,), 10**20 - 1)],
        ref='''
        def integer_sqrt(n: int) -> int:
            if n < 2:
                return n
            r = n
            while True:
                nxt = (r + n // r) // 2
                if nxt >= r:
                    return r
                r = nxt
        ''',
        gen="return (rng.choice([rng.randint(0, 1000), rng.randint(0, 10**40), rng.randint(1, 10**15) ** 2]),)",
    ),
    fn(
        "mean", 0.05,
        "Return the arithmetic mean of `xs` as a float, or `None` for an empty list.",
        examples=[(([1, 2, 3, 4],), 2.5), (([],), None)],
        tests=[(([5],), 5.0), (([-1, 1],), 0.0), (([1, 2],), 1.5)],
        ref='''
        def mean(xs: list[int]) -> float | None:
            return sum(xs) / len(xs) if xs else None
        ''',
        gen="return (ints(rng, rng.randint(0, 10)),)",
    ),
    fn(
        "median", 0.2,
        "Return the median of `xs` (the mean of the two middle values when the length is even), "
        "or `None` for an empty list.",
        examples=[(([3, 1, 2],), 2), (([4, 1, 3, 2],), 2.5)],
        tests=[(([],), None), (([7],), 7), (([1, 1, 2, 2],), 1.5), (([5, -5],), 0.0)],
        ref='''
        def median(xs: list[int]) -> float | None:
            if not xs:
                return None
            s = sorted(xs)
            mid = len(s) // 2
            return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
        ''',
        gen="return (ints(rng, rng.randint(0, 9), -50, 50),)",
    ),
    fn(
        "is_armstrong", 0.2,
        "Return `True` if the non-negative integer `n` equals the sum of its decimal digits, each "
        "raised to the power of the number of digits.",
        examples=[((153,), True), ((10,), False)],
        tests=[((0,), True), ((9,), True), ((370,), True), ((9474,), True), ((100,), False)],
        ref='''
        def is_armstrong(n: int) -> bool:
            digits = str(n)
            return n == sum(int(d) ** len(digits) for d in digits)
        ''',
        gen="return (rng.choice([153, 370, 371, 407, 1634, 8208, rng.randint(0, 10**5)]),)",
    ),
    fn(
        "sum_of_multiples", 0.1,
        "Return the sum of the non-negative integers below `n` that are divisible by 3 or 5.",
        examples=[((10,), 23), ((1,), 0)],
        tests=[((16,), 60), ((0,), 0), ((1000,), 233168)],
        ref='''
        def sum_of_multiples(n: int) -> int:
            return sum(k for k in range(n) if k % 3 == 0 or k % 5 == 0)
        ''',
        gen="return (rng.randint(0, 10**4),)",
    ),
    fn(
        "nth_prime", 0.35,
        "Return the `n`-th prime number, 1-based (`nth_prime(1) == 2`, `n <= 3000`).",
        examples=[((1,), 2), ((6,), 13)],
        tests=[((2,), 3), ((10,), 29), ((100,), 541), ((1000,), 7919)],
        ref='''
        def nth_prime(n: int) -> int:
            primes = []
            k = 2
            while len(primes) < n:
                for p in primes:
                    if p * p > k:
                        primes.append(k)
                        break
                    if k % p == 0:
                        break
                else:
                    primes.append(k)
                k += 1
            return primes[-1]
        ''',
        gen="return (rng.randint(1, 3000),)",
    ),
    fn(
        "poly_eval", 0.15,
        "Evaluate the polynomial with coefficients `coeffs` (`coeffs[i]` multiplies `x ** i`) "
        "at `x`.",
        examples=[(([1, 2, 3], 2), 17), (([], 5), 0)],
        tests=[(([5], 10), 5), (([0, 1], -3), -3), (([1, 0, -1], 3), -8)],
        ref='''
        def poly_eval(coeffs: list[int], x: int) -> int:
            total = 0
            for c in reversed(coeffs):
                total = total * x + c
            return total
        ''',
        gen="return (ints(rng, rng.randint(0, 6), -9, 9), rng.randint(-5, 5))",
    ),
    fn(
        "count_primes", 0.35,
        "Return how many primes are smaller than `n` (`0 <= n <= 10**6`).",
        examples=[((10,), 4), ((2,), 0)],
        tests=[((0,), 0), ((3,), 1), ((100,), 25), ((1000,), 168)],
        ref='''
        def count_primes(n: int) -> int:
            if n < 3:
                return 0
            sieve = bytearray([1]) * n
            sieve[0] = sieve[1] = 0
            for k in range(2, int(n ** 0.5) + 1):
                if sieve[k]:
                    sieve[k * k::k] = bytearray(len(range(k * k, n, k)))
            return sum(sieve)
        ''',
        gen="return (rng.choice([rng.randint(0, 100), rng.randint(0, 10**6)]),)",
    ),
    fn(
        "simplify_fraction", 0.25,
        "Return the fraction `num / den` (`den != 0`) in lowest terms as `[numerator, "
        "denominator]` with a positive denominator.",
        examples=[((6, 8), [3, 4]), ((-2, -4), [1, 2])],
        tests=[((0, 5), [0, 1]), ((3, -9), [-1, 3]), ((7, 1), [7, 1])],
        ref='''
        from math import gcd

        def simplify_fraction(num: int, den: int) -> list[int]:
            g = gcd(num, den)
            num, den = num // g, den // g
            if den < 0:
                num, den = -num, -den
            return [num, den]
        ''',
        gen="return (rng.randint(-60, 60), rng.choice([-1, 1]) * rng.randint(1, 60))",
    ),
    fn(
        "digital_root", 0.1,
        "Repeatedly replace the non-negative integer `n` by the sum of its digits until it has "
        "one digit, and return that digit.",
        examples=[((942,), 6), ((0,), 0)],
        tests=[((16,), 7), ((132189,), 6), ((9,), 9)],
        ref='''
        def digital_root(n: int) -> int:
            while n >= 10:
                n = sum(int(d) for d in str(n))
            return n
        ''',
        gen="return (rng.randint(0, 10**12),)",
    ),
    fn(
        "matrix_multiply", 0.35,
        "Return the matrix product `a @ b` (the number of columns of `a` equals the number of "
        "rows of `b`).",
        examples=[(([[1, 2], [3, 4]], [[5, 6], [7, 8]]), [[19, 22], [43, 50]]),
                  (([[1, 2, 3]], [[1], [2], [3]]), [[14]])],
        tests=[(([[2]], [[3]]), [[6]]), (([[1], [2]], [[3, 4]]), [[3, 4], [6, 8]]),
               (([[1, 0], [0, 1]], [[9, 8], [7, 6]]), [[9, 8], [7, 6]])],
        ref='''
        def matrix_multiply(a: list[list[int]], b: list[list[int]]) -> list[list[int]]:
            return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]
        ''',
        gen='''
        n, m, p = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 4)
        return ([ints(rng, m, -5, 5) for _ in range(n)], [ints(rng, p, -5, 5) for _ in range(m)])
        ''',
    ),
    fn(
        "power_mod", 0.3,
        "Return `(b ** e) % m` for integers `b >= 0`, `e >= 0`, `m >= 1`; `e` can be huge, so "
        "do not compute `b ** e` itself.",
        examples=[((2, 10, 1000), 24), ((3, 0, 7), 1)],
        tests=[((5, 3, 13), 8), ((10, 9, 7), 6), ((7, 2, 1), 0), ((0, 0, 5), 1),
               ((2, 10**18, 1000000007), pow(2, 10**18, 1000000007))],
        ref='''
        def power_mod(b: int, e: int, m: int) -> int:
            result = 1 % m
            b %= m
            while e:
                if e & 1:
                    result = result * b % m
                b = b * b % m
                e >>= 1
            return result
        ''',
        gen="return (rng.randint(0, 10**9), rng.randint(0, 10**18), rng.randint(1, 10**9))",
    ),
    fn(
        "count_divisors", 0.2,
        "Return how many positive divisors the positive integer `n` has (`n <= 10**9`).",
        examples=[((12,), 6), ((1,), 1)],
        tests=[((7,), 2), ((36,), 9), ((100,), 9), ((720720,), 240)],
        ref='''
        def count_divisors(n: int) -> int:
            count = 0
            k = 1
            while k * k <= n:
                if n % k == 0:
                    count += 1 if k * k == n else 2
                k += 1
            return count
        ''',
        gen="return (rng.randint(1, 10**9),)",
    ),
    fn(
        "base_convert", 0.4,
        "Return the representation of the integer `n` in base `base` (2 to 16) using the digits "
        "`0-9` and upper-case `A-F`, with a leading `-` for negative numbers.",
        examples=[((255, 16), "FF"), ((-5, 2), "-101")],
        tests=[((0, 7), "0"), ((10, 10), "10"), ((35, 3), "1022"), ((4095, 16), "FFF")],
        ref='''
        def base_convert(n: int, base: int) -> str:
            if n == 0:
                return "0"
            digits = []
            m = abs(n)
            while m:
                digits.append("0123456789ABCDEF"[m % base])
                m //= base
            return ("-" if n < 0 else "") + "".join(reversed(digits))
        ''',
        gen="return (rng.randint(-10**6, 10**6), rng.randint(2, 16))",
    ),
]
