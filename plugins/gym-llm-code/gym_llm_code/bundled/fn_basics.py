"""Warm-up function tasks (difficulty ~0): one obvious line each, so that a
tiny model can earn its first rewards."""

from ..problems import fn

TOPIC = "basics"

PROBLEMS = [
    fn(
        "greet", 0.0,
        "Return the greeting `Hello, <name>!` for the given name.",
        examples=[(("Ada",), "Hello, Ada!"), (("world",), "Hello, world!")],
        tests=[(("",), "Hello, !"), (("Bob",), "Hello, Bob!"), (("x y",), "Hello, x y!")],
        ref='''
        def greet(name: str) -> str:
            return f"Hello, {name}!"
        ''',
        gen="return (word(rng, 0, 10, LOWER + UPPER),)",
    ),
    fn(
        "double_all", 0.0,
        "Return a new list with every number of `xs` multiplied by 2.",
        examples=[(([1, 2, 3],), [2, 4, 6]), (([],), [])],
        tests=[(([-4],), [-8]), (([0, 5, 0],), [0, 10, 0]), (([100, -1],), [200, -2])],
        ref='''
        def double_all(xs: list[int]) -> list[int]:
            return [2 * x for x in xs]
        ''',
        gen="return (ints(rng, rng.randint(0, 10)),)",
    ),
    fn(
        "absolute", 0.0,
        "Return the absolute value of the integer `n`.",
        examples=[((-5,), 5), ((3,), 3)],
        tests=[((0,), 0), ((-1000,), 1000), ((42,), 42)],
        ref='''
        def absolute(n: int) -> int:
            return abs(n)
        ''',
        gen="return (rng.randint(-10**6, 10**6),)",
    ),
    fn(
        "last_item", 0.0,
        "Return the last element of the list `xs`, or `None` if it is empty.",
        examples=[(([1, 2, 3],), 3), (([],), None)],
        tests=[(([7],), 7), ((["a", "b"],), "b"), (([0, 0, -1],), -1)],
        ref='''
        def last_item(xs: list) -> object:
            return xs[-1] if xs else None
        ''',
        gen="return (ints(rng, rng.randint(0, 6)),)",
    ),
    fn(
        "concat", 0.0,
        "Return the strings `a` and `b` joined with a single space between them.",
        examples=[(("hello", "world"), "hello world"), (("a", ""), "a ")],
        tests=[(("", ""), " "), (("x", "y"), "x y"), (("good", "morning"), "good morning")],
        ref='''
        def concat(a: str, b: str) -> str:
            return a + " " + b
        ''',
        gen="return (word(rng, 0, 6), word(rng, 0, 6))",
    ),
    fn(
        "is_positive", 0.0,
        "Return `True` if the integer `n` is greater than zero, otherwise `False`.",
        examples=[((5,), True), ((-2,), False)],
        tests=[((0,), False), ((1,), True), ((-1,), False), ((10**9,), True)],
        ref='''
        def is_positive(n: int) -> bool:
            return n > 0
        ''',
        gen="return (rng.randint(-50, 50),)",
    ),
    fn(
        "max_of_two", 0.0,
        "Return the larger of the two integers `a` and `b`.",
        examples=[((3, 7), 7), ((-1, -5), -1)],
        tests=[((4, 4), 4), ((0, -1), 0), ((-10, 10), 10)],
        ref='''
        def max_of_two(a: int, b: int) -> int:
            return a if a >= b else b
        ''',
        gen="return (rng.randint(-100, 100), rng.randint(-100, 100))",
    ),
    fn(
        "repeat_string", 0.0,
        "Return the string `s` repeated `n` times (`n >= 0`).",
        examples=[(("ab", 3), "ababab"), (("x", 0), "")],
        tests=[(("", 5), ""), (("hi", 1), "hi"), (("z", 4), "zzzz")],
        ref='''
        def repeat_string(s: str, n: int) -> str:
            return s * n
        ''',
        gen="return (word(rng, 0, 4), rng.randint(0, 6))",
    ),
    fn(
        "to_upper", 0.0,
        "Return the string `s` with every letter in upper case.",
        examples=[(("hello",), "HELLO"), (("MiXeD 1",), "MIXED 1")],
        tests=[(("",), ""), (("abc def",), "ABC DEF"), (("ALREADY",), "ALREADY")],
        ref='''
        def to_upper(s: str) -> str:
            return s.upper()
        ''',
        gen="return (word(rng, 0, 12, LOWER + UPPER + DIGITS + ' '),)",
    ),
    fn(
        "count_items", 0.0,
        "Return how many elements the list `xs` has.",
        examples=[(([1, 2, 3],), 3), (([],), 0)],
        tests=[(([0],), 1), ((["a", "b", "c", "d"],), 4), (([[1, 2], [3]],), 2)],
        ref='''
        def count_items(xs: list) -> int:
            return len(xs)
        ''',
        gen="return (ints(rng, rng.randint(0, 12)),)",
    ),
    fn(
        "shout", 0.0,
        "Return `s` in upper case followed by an exclamation mark.",
        examples=[(("hi",), "HI!"), (("Hello world",), "HELLO WORLD!")],
        tests=[(("",), "!"), (("a1b",), "A1B!"), (("ok",), "OK!")],
        ref='''
        def shout(s: str) -> str:
            return s.upper() + "!"
        ''',
        gen="return (word(rng, 0, 10, LOWER + ' '),)",
    ),
    fn(
        "first_char", 0.0,
        "Return the first character of `s`, or the empty string if `s` is empty.",
        examples=[(("abc",), "a"), (("",), "")],
        tests=[(("Z",), "Z"), ((" x",), " "), (("hello",), "h")],
        ref='''
        def first_char(s: str) -> str:
            return s[:1]
        ''',
        gen="return (word(rng, 0, 6, LOWER + ' '),)",
    ),
    fn(
        "add", 0.0,
        "Return the sum of the integers `a` and `b`.",
        examples=[((2, 3), 5), ((-1, 1), 0)],
        tests=[((0, 0), 0), ((100, -250), -150), ((7, 8), 15)],
        ref='''
        def add(a: int, b: int) -> int:
            return a + b
        ''',
        gen="return (rng.randint(-1000, 1000), rng.randint(-1000, 1000))",
    ),
    fn(
        "square", 0.0,
        "Return `n` squared.",
        examples=[((3,), 9), ((-4,), 16)],
        tests=[((0,), 0), ((12,), 144), ((1,), 1)],
        ref='''
        def square(n: int) -> int:
            return n * n
        ''',
        gen="return (rng.randint(-1000, 1000),)",
    ),
    fn(
        "is_even", 0.0,
        "Return `True` if the integer `n` is even, otherwise `False`.",
        examples=[((4,), True), ((7,), False)],
        tests=[((0,), True), ((-3,), False), ((-8,), True)],
        ref='''
        def is_even(n: int) -> bool:
            return n % 2 == 0
        ''',
        gen="return (rng.randint(-1000, 1000),)",
    ),
    fn(
        "sum_list", 0.0,
        "Return the sum of the integers in `xs` (0 for an empty list).",
        examples=[(([1, 2, 3],), 6), (([],), 0)],
        tests=[(([-1, 1],), 0), (([100],), 100), (([5, 5, 5, 5],), 20)],
        ref='''
        def sum_list(xs: list[int]) -> int:
            return sum(xs)
        ''',
        gen="return (ints(rng, rng.randint(0, 10)),)",
    ),
    fn(
        "count_words", 0.0,
        "Return the number of words in `s`, where words are separated by whitespace.",
        examples=[(("hello world",), 2), (("",), 0)],
        tests=[(("  a  ",), 1), (("one two three",), 3), (("x\ny",), 2)],
        ref='''
        def count_words(s: str) -> int:
            return len(s.split())
        ''',
        gen="return (word(rng, 0, 20, 'ab  \\n'),)",
    ),
    fn(
        "evens", 0.0,
        "Return the even numbers of `xs`, in their original order.",
        examples=[(([1, 2, 3, 4],), [2, 4]), (([],), [])],
        tests=[(([-2, -1, 0],), [-2, 0]), (([1, 3],), []), (([8, 8],), [8, 8])],
        ref='''
        def evens(xs: list[int]) -> list[int]:
            return [x for x in xs if x % 2 == 0]
        ''',
        gen="return (ints(rng, rng.randint(0, 10), -20, 20),)",
    ),
    fn(
        "max_of", 0.0,
        "Return the largest number in `xs`, or `None` if `xs` is empty.",
        examples=[(([3, 1, 2],), 3), (([],), None)],
        tests=[(([-5, -2, -9],), -2), (([7],), 7), (([1, 1],), 1)],
        ref='''
        def max_of(xs: list[int]) -> int | None:
            return max(xs) if xs else None
        ''',
        gen="return (ints(rng, rng.randint(0, 8)),)",
    ),
]
