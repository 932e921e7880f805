"""Warm-up stdin/stdout tasks: read, compute one thing, print."""

from ..problems import prog

TOPIC = "stdio-basics"

PROBLEMS = [
    prog(
        "sum_two", 0.0,
        "Read two integers and print their sum.",
        input="One line with two integers a and b (|a|, |b| <= 10^18).",
        output="One integer: a + b.",
        examples=[("1 2\n", "3\n"), ("-5 5\n", "0\n")],
        tests=[("0 0\n", "0\n"), ("1000000000000000000 1000000000000000000\n", "2000000000000000000\n"),
               ("-7 -8\n", "-15\n")],
        ref='''
        a, b = map(int, input().split())
        print(a + b)
        ''',
        gen='return f"{rng.randint(-10**18, 10**18)} {rng.randint(-10**18, 10**18)}\\n"',
    ),
    prog(
        "echo_upper", 0.0,
        "Read one line of text and print it in upper case.",
        input="One line of printable ASCII text (letters, digits, spaces, punctuation).",
        output="The same line with every letter in upper case.",
        examples=[("hello world\n", "HELLO WORLD\n"), ("abc123\n", "ABC123\n")],
        tests=[("Already UP\n", "ALREADY UP\n"), ("x\n", "X\n"), ("mixed, Case!\n", "MIXED, CASE!\n")],
        ref='''
        print(input().upper())
        ''',
        gen="return word(rng, 1, 20, LOWER + UPPER + DIGITS + ' ,!') + '\\n'",
    ),
    prog(
        "reverse_line", 0.0,
        "Read one word and print it reversed.",
        input="One line with a word of 1 to 100 letters.",
        output="The word reversed.",
        examples=[("hello\n", "olleh\n"), ("a\n", "a\n")],
        tests=[("ab\n", "ba\n"), ("racecar\n", "racecar\n"), ("Python\n", "nohtyP\n")],
        ref='''
        print(input().strip()[::-1])
        ''',
        gen="return word(rng, 1, 30, LOWER + UPPER) + '\\n'",
    ),
    prog(
        "count_up", 0.0,
        "Read n and print the numbers 1 to n, one per line.",
        input="One integer n (1 <= n <= 1000).",
        output="n lines: 1, 2, ..., n.",
        examples=[("3\n", "1\n2\n3\n"), ("1\n", "1\n")],
        tests=[("5\n", "1\n2\n3\n4\n5\n"), ("2\n", "1\n2\n")],
        ref='''
        n = int(input())
        print("\\n".join(str(i) for i in range(1, n + 1)))
        ''',
        gen="return f'{rng.randint(1, 1000)}\\n'",
    ),
    prog(
        "max_of_n", 0.05,
        "Read n integers and print the largest.",
        input="The first line has n (1 <= n <= 10^5); the second line has n integers (|x| <= 10^9).",
        output="The largest of the n integers.",
        examples=[("3\n1 5 2\n", "5\n"), ("1\n-4\n", "-4\n")],
        tests=[("4\n-1 -2 -3 -4\n", "-1\n"), ("2\n7 7\n", "7\n"), ("5\n0 10 3 10 9\n", "10\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        n = int(data[0])
        print(max(int(x) for x in data[1:1 + n]))
        ''',
        gen='''
        xs = ints(rng, rng.randint(1, 50), -10**9, 10**9)
        return f"{len(xs)}\\n{' '.join(map(str, xs))}\\n"
        ''',
    ),
    prog(
        "count_evens", 0.05,
        "Read n integers and print how many of them are even.",
        input="The first line has n (0 <= n <= 10^5); the second line has n integers.",
        output="The number of even integers.",
        examples=[("4\n1 2 3 4\n", "2\n"), ("3\n1 3 5\n", "0\n")],
        tests=[("0\n\n", "0\n"), ("3\n0 -2 -3\n", "2\n"), ("1\n8\n", "1\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        n = int(data[0])
        print(sum(1 for x in data[1:1 + n] if int(x) % 2 == 0))
        ''',
        gen='''
        xs = ints(rng, rng.randint(0, 40), -100, 100)
        return f"{len(xs)}\\n{' '.join(map(str, xs))}\\n"
        ''',
    ),
    prog(
        "fizzbuzz", 0.1,
        "Print the numbers 1 to n, but print Fizz for multiples of 3, Buzz for multiples of 5 and "
        "FizzBuzz for multiples of both.",
        input="One integer n (1 <= n <= 1000).",
        output="n lines.",
        examples=[("5\n", "1\n2\nFizz\n4\nBuzz\n"), ("1\n", "1\n")],
        tests=[("15\n", "1\n2\nFizz\n4\nBuzz\nFizz\n7\n8\nFizz\nBuzz\n11\nFizz\n13\n14\nFizzBuzz\n"),
               ("3\n", "1\n2\nFizz\n")],
        ref='''
        n = int(input())
        for i in range(1, n + 1):
            print("FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else i)
        ''',
        gen="return f'{rng.randint(1, 200)}\\n'",
    ),
    prog(
        "average", 0.1,
        "Read n integers and print their average.",
        input="The first line has n (1 <= n <= 10^5); the second line has n integers (|x| <= 10^6).",
        output="The average; any answer within 10^-6 (absolute or relative) is accepted.",
        examples=[("4\n1 2 3 4\n", "2.5\n"), ("1\n7\n", "7\n")],
        tests=[("2\n-1 1\n", "0\n"), ("3\n1 1 2\n", "1.3333333333\n"), ("2\n1000000 999999\n", "999999.5\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        n = int(data[0])
        print(f"{sum(int(x) for x in data[1:1 + n]) / n:.10f}")
        ''',
        gen='''
        xs = ints(rng, rng.randint(1, 30), -10**6, 10**6)
        return f"{len(xs)}\\n{' '.join(map(str, xs))}\\n"
        ''',
    ),
    prog(
        "min_max", 0.05,
        "Read n integers and print the smallest and the largest.",
        input="The first line has n (1 <= n <= 10^5); the second line has n integers.",
        output="Two integers separated by a space: the minimum and the maximum.",
        examples=[("3\n3 1 2\n", "1 3\n"), ("1\n5\n", "5 5\n")],
        tests=[("4\n-1 -5 10 0\n", "-5 10\n"), ("2\n2 2\n", "2 2\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        xs = [int(x) for x in data[1:1 + int(data[0])]]
        print(min(xs), max(xs))
        ''',
        gen='''
        xs = ints(rng, rng.randint(1, 30), -1000, 1000)
        return f"{len(xs)}\\n{' '.join(map(str, xs))}\\n"
        ''',
    ),
    prog(
        "words_in_line", 0.0,
        "Read one line and print how many words it has (words are separated by spaces).",
        input="One line of lower-case words separated by one or more spaces (possibly none).",
        output="The number of words.",
        examples=[("hello big world\n", "3\n"), ("one\n", "1\n")],
        tests=[("  a   b  \n", "2\n"), ("\n", "0\n"), ("x y z w\n", "4\n")],
        ref='''
        import sys
        print(len(sys.stdin.readline().split()))
        ''',
        gen="return word(rng, 0, 30, 'ab  ') + '\\n'",
    ),
    prog(
        "celsius_to_fahrenheit", 0.05,
        "Convert a temperature from Celsius to Fahrenheit (F = C * 9 / 5 + 32).",
        input="One integer C (|C| <= 1000).",
        output="F; any answer within 10^-6 is accepted.",
        examples=[("100\n", "212\n"), ("0\n", "32\n")],
        tests=[("-40\n", "-40\n"), ("37\n", "98.6\n"), ("1\n", "33.8\n")],
        ref='''
        c = int(input())
        print(c * 9 / 5 + 32)
        ''',
        gen="return f'{rng.randint(-1000, 1000)}\\n'",
    ),
    prog(
        "square_pattern", 0.05,
        "Print an n by n square of asterisks.",
        input="One integer n (1 <= n <= 50).",
        output="n lines of n `*` characters.",
        examples=[("2\n", "**\n**\n"), ("1\n", "*\n")],
        tests=[("3\n", "***\n***\n***\n"), ("4\n", "****\n****\n****\n****\n")],
        ref='''
        n = int(input())
        for _ in range(n):
            print("*" * n)
        ''',
        gen="return f'{rng.randint(1, 50)}\\n'",
    ),
    prog(
        "triangle_type", 0.2,
        "Classify a triangle by its side lengths.",
        input="Three positive integers a, b, c (<= 10^9).",
        output="`invalid` if they cannot form a triangle with positive area (the largest side is "
               "at least the sum of the other two), else `equilateral`, `isosceles` or `scalene`.",
        examples=[("3 4 5\n", "scalene\n"), ("2 2 2\n", "equilateral\n")],
        tests=[("1 2 3\n", "invalid\n"), ("5 5 8\n", "isosceles\n"), ("1 1 5\n", "invalid\n"), ("8 5 5\n", "isosceles\n")],
        ref='''
        a, b, c = sorted(map(int, input().split()))
        if a + b <= c:
            print("invalid")
        elif a == c:
            print("equilateral")
        elif a == b or b == c:
            print("isosceles")
        else:
            print("scalene")
        ''',
        gen='return " ".join(str(rng.randint(1, 8)) for _ in range(3)) + "\\n"',
    ),
    prog(
        "leap_year", 0.1,
        "Decide whether a year is a leap year in the Gregorian calendar (divisible by 4, except "
        "years divisible by 100 that are not divisible by 400).",
        input="One integer y (1 <= y <= 10^9).",
        output="`YES` or `NO`.",
        examples=[("2024\n", "YES\n"), ("1900\n", "NO\n")],
        tests=[("2000\n", "YES\n"), ("2023\n", "NO\n"), ("4\n", "YES\n"), ("2100\n", "NO\n")],
        ref='''
        y = int(input())
        print("YES" if y % 4 == 0 and (y % 100 != 0 or y % 400 == 0) else "NO")
        ''',
        gen="return f'{rng.choice([rng.randint(1, 3000), rng.randint(1, 30) * 100])}\\n'",
    ),
    prog(
        "digit_sum_big", 0.05,
        "Print the sum of the digits of a (possibly very long) number.",
        input="One line with a non-negative integer of up to 10^5 digits.",
        output="The sum of its digits.",
        examples=[("123\n", "6\n"), ("0\n", "0\n")],
        tests=[("99999999999999999999\n", "180\n"), ("1000000000000000000000001\n", "2\n")],
        ref='''
        print(sum(int(c) for c in input().strip()))
        ''',
        gen="return str(rng.randint(1, 9)) + word(rng, 0, 200, DIGITS) + '\\n'",
    ),
    prog(
        "is_palindrome_word", 0.05,
        "Decide whether a word reads the same forwards and backwards.",
        input="One word of lower-case letters.",
        output="`YES` or `NO`.",
        examples=[("level\n", "YES\n"), ("hello\n", "NO\n")],
        tests=[("a\n", "YES\n"), ("ab\n", "NO\n"), ("abba\n", "YES\n")],
        ref='''
        s = input().strip()
        print("YES" if s == s[::-1] else "NO")
        ''',
        gen='''
        half = word(rng, 1, 6, "ab")
        return (half + rng.choice(["", "a", "c"]) + (half[::-1] if rng.random() < 0.6 else half)) + "\\n"
        ''',
    ),
    prog(
        "sort_numbers", 0.1,
        "Sort n integers in non-decreasing order.",
        input="The first line has n (1 <= n <= 10^5); the second line has n integers.",
        output="The n integers in sorted order, separated by spaces.",
        examples=[("3\n3 1 2\n", "1 2 3\n"), ("1\n5\n", "5\n")],
        tests=[("5\n5 -1 5 0 -1\n", "-1 -1 0 5 5\n"), ("2\n2 1\n", "1 2\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        xs = sorted(int(x) for x in data[1:1 + int(data[0])])
        print(" ".join(map(str, xs)))
        ''',
        gen='''
        xs = ints(rng, rng.randint(1, 40), -100, 100)
        return f"{len(xs)}\\n{' '.join(map(str, xs))}\\n"
        ''',
    ),
    prog(
        "letter_grade", 0.05,
        "Convert a score to a letter grade: A for 90-100, B for 80-89, C for 70-79, D for 60-69, "
        "F below 60.",
        input="One integer score (0 <= score <= 100).",
        output="One letter.",
        examples=[("95\n", "A\n"), ("59\n", "F\n")],
        tests=[("90\n", "A\n"), ("89\n", "B\n"), ("70\n", "C\n"), ("60\n", "D\n"), ("0\n", "F\n")],
        ref='''
        s = int(input())
        print("A" if s >= 90 else "B" if s >= 80 else "C" if s >= 70 else "D" if s >= 60 else "F")
        ''',
        gen="return f'{rng.randint(0, 100)}\\n'",
    ),
    prog(
        "gcd_lcm", 0.15,
        "Print the greatest common divisor and the least common multiple of two positive integers.",
        input="Two integers a and b (1 <= a, b <= 10^9).",
        output="Two integers: gcd(a, b) and lcm(a, b).",
        examples=[("4 6\n", "2 12\n"), ("7 13\n", "1 91\n")],
        tests=[("5 5\n", "5 5\n"), ("1 1000000000\n", "1 1000000000\n"), ("12 18\n", "6 36\n")],
        ref='''
        from math import gcd
        a, b = map(int, input().split())
        g = gcd(a, b)
        print(g, a // g * b)
        ''',
        gen='return f"{rng.randint(1, 10**9)} {rng.randint(1, 10**9)}\\n"',
    ),
    prog(
        "vowel_count_line", 0.05,
        "Count the vowels (a, e, i, o, u, either case) in a line.",
        input="One line of text.",
        output="The number of vowels.",
        examples=[("Hello World\n", "3\n"), ("xyz\n", "0\n")],
        tests=[("AEIOU aeiou\n", "10\n"), ("rhythm and blues\n", "3\n")],
        ref='''
        import sys
        print(sum(1 for c in sys.stdin.readline().lower() if c in "aeiou"))
        ''',
        gen="return word(rng, 0, 30, LOWER + UPPER + ' ') + '\\n'",
    ),
]
