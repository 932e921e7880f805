"""Recursion, backtracking and dynamic programming function tasks."""

from ..problems import fn

TOPIC = "recursion"

PROBLEMS = [
    fn(
        "flatten", 0.3,
        "Flatten the arbitrarily nested list `xs` (elements are integers or lists) into a flat "
        "list of integers, in order.",
        examples=[(([1, [2, [3, 4]], 5],), [1, 2, 3, 4, 5]), (([],), [])],
        tests=[(([[[]]],), []), (([[1], [2], [3]],), [1, 2, 3]), (([1, [2], [[3]], [[[4]]]],), [1, 2, 3, 4])],
        ref='''
        def flatten(xs: list) -> list[int]:
            out = []
            for x in xs:
                if isinstance(x, list):
                    out.extend(flatten(x))
                else:
                    out.append(x)
            return out
        ''',
        gen='''
        def build(depth):
            out = []
            for _ in range(rng.randint(0, 3)):
                out.append(build(depth - 1) if depth and rng.random() < 0.4 else rng.randint(0, 9))
            return out
        return (build(4),)
        ''',
    ),
    fn(
        "nested_sum", 0.25,
        "Return the sum of all integers in the arbitrarily nested list `xs`.",
        examples=[(([1, [2, 3], [[4]]],), 10), (([],), 0)],
        tests=[(([[-1], [1]],), 0), (([5],), 5), (([[[[]]]],), 0)],
        ref='''
        def nested_sum(xs: list) -> int:
            return sum(nested_sum(x) if isinstance(x, list) else x for x in xs)
        ''',
        gen='''
        def build(depth):
            out = []
            for _ in range(rng.randint(0, 3)):
                out.append(build(depth - 1) if depth and rng.random() < 0.4 else rng.randint(-9, 9))
            return out
        return (build(4),)
        ''',
    ),
    fn(
        "max_depth", 0.35,
        "Return the nesting depth of the list `xs`: a list with no list inside has depth 1, and "
        "each level of nesting adds one.",
        examples=[(([1, [2, [3]]],), 3), (([],), 1)],
        tests=[(([[], []],), 2), (([1, 2],), 1), (([[[[]]]],), 4)],
        ref='''
        def max_depth(xs: list) -> int:
            return 1 + max((max_depth(x) for x in xs if isinstance(x, list)), default=0)
        ''',
        gen='''
        def build(depth):
            out = []
            for _ in range(rng.randint(0, 3)):
                out.append(build(depth - 1) if depth and rng.random() < 0.5 else 0)
            return out
        return (build(5),)
        ''',
    ),
    fn(
        "permutations", 0.4,
        "Return all distinct permutations of the string `s`, sorted.",
        examples=[(("abc",), ["abc", "acb", "bac", "bca", "cab", "cba"]), (("aab",), ["aab", "aba", "baa"])],
        tests=[(("",), [""]), (("a",), ["a"]), (("ab",), ["ab", "ba"])],
        ref='''
        def permutations(s: str) -> list[str]:
            if len(s) <= 1:
                return [s]
            out = set()
            for i, c in enumerate(s):
                for rest in permutations(s[:i] + s[i + 1:]):
                    out.add(c + rest)
            return sorted(out)
        ''',
        gen="return (word(rng, 0, 6, 'abcd'),)",
    ),
    fn(
        "subsets", 0.4,
        "Return every subset of the distinct integers `xs`, each subset sorted ascending, and the "
        "list of subsets sorted (as lists compare in Python).",
        examples=[(([1, 2],), [[], [1], [1, 2], [2]]), (([],), [[]])],
        tests=[(([3],), [[], [3]]), (([2, 1, 3],), [[], [1], [1, 2], [1, 2, 3], [1, 3], [2], [2, 3], [3]])],
        ref='''
        def subsets(xs: list[int]) -> list[list[int]]:
            out = [[]]
            for x in sorted(xs):
                out += [s + [x] for s in out]
            return sorted(out)
        ''',
        gen="return (rng.sample(range(-5, 10), rng.randint(0, 5)),)",
    ),
    fn(
        "hanoi_moves", 0.35,
        "Return the moves that solve the Towers of Hanoi with `n` disks, moving them from peg 1 "
        "to peg 3 (using peg 2), as `[from, to]` pairs, in the usual minimal recursive order.",
        examples=[((1,), [[1, 3]]), ((2,), [[1, 2], [1, 3], [2, 3]])],
        tests=[((0,), []), ((3,), [[1, 3], [1, 2], [3, 2], [1, 3], [2, 1], [2, 3], [1, 3]])],
        ref='''
        def hanoi_moves(n: int) -> list[list[int]]:
            def solve(k, a, b, c):
                if k == 0:
                    return []
                return solve(k - 1, a, c, b) + [[a, c]] + solve(k - 1, b, a, c)
            return solve(n, 1, 2, 3)
        ''',
        gen="return (rng.randint(0, 8),)",
    ),
    fn(
        "binary_strings_no_11", 0.25,
        "Return all binary strings of length `n` with no two adjacent `1`s, sorted.",
        examples=[((2,), ["00", "01", "10"]), ((0,), [""])],
        tests=[((1,), ["0", "1"]), ((3,), ["000", "001", "010", "100", "101"])],
        ref='''
        def binary_strings_no_11(n: int) -> list[str]:
            if n == 0:
                return [""]
            out = []
            for s in binary_strings_no_11(n - 1):
                out.append(s + "0")
                if not s.endswith("1"):
                    out.append(s + "1")
            return sorted(out)
        ''',
        gen="return (rng.randint(0, 10),)",
    ),
    fn(
        "edit_distance", 0.55,
        "Return the Levenshtein distance between `a` and `b`: the fewest single-character "
        "insertions, deletions and substitutions that turn `a` into `b`.",
        examples=[(("kitten", "sitting"), 3), (("", "abc"), 3)],
        tests=[(("", ""), 0), (("abc", "abc"), 0), (("horse", "ros"), 3), (("intention", "execution"), 5)],
        ref='''
        def edit_distance(a: str, b: str) -> int:
            prev = list(range(len(b) + 1))
            for i, ca in enumerate(a, 1):
                cur = [i]
                for j, cb in enumerate(b, 1):
                    cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
                prev = cur
            return prev[-1]
        ''',
        gen="return (word(rng, 0, 10, 'abc'), word(rng, 0, 10, 'abc'))",
    ),
    fn(
        "count_paths", 0.3,
        "Return the number of paths from the top-left to the bottom-right cell of a grid of "
        "`rows` x `cols` cells, moving only right or down.",
        examples=[((2, 2), 2), ((3, 7), 28)],
        tests=[((1, 1), 1), ((1, 5), 1), ((3, 3), 6), ((10, 10), 48620)],
        ref='''
        def count_paths(rows: int, cols: int) -> int:
            row = [1] * cols
            for _ in range(rows - 1):
                for j in range(1, cols):
                    row[j] += row[j - 1]
            return row[-1]
        ''',
        gen="return (rng.randint(1, 15), rng.randint(1, 15))",
    ),
    fn(
        "coin_change_ways", 0.45,
        "Return the number of ways to make `amount` from the coin values `coins` (unlimited "
        "coins of each value; the order of coins does not matter).",
        examples=[((5, [1, 2, 5]), 4), ((3, [2]), 0)],
        tests=[((0, [1]), 1), ((10, [10]), 1), ((10, [2, 5, 3, 6]), 5), ((0, []), 1)],
        ref='''
        def coin_change_ways(amount: int, coins: list[int]) -> int:
            ways = [1] + [0] * amount
            for c in coins:
                for a in range(c, amount + 1):
                    ways[a] += ways[a - c]
            return ways[amount]
        ''',
        gen="return (rng.randint(0, 60), sorted(rng.sample(range(1, 15), rng.randint(0, 4))))",
    ),
    fn(
        "min_coins", 0.45,
        "Return the fewest coins (unlimited coins of each value in `coins`) that add up to "
        "`amount`, or -1 if it cannot be done.",
        examples=[((11, [1, 2, 5]), 3), ((3, [2]), -1)],
        tests=[((0, [1]), 0), ((7, [2, 3]), 3), ((6, [1, 3, 4]), 2), ((1, []), -1)],
        ref='''
        def min_coins(amount: int, coins: list[int]) -> int:
            inf = float("inf")
            best = [0] + [inf] * amount
            for a in range(1, amount + 1):
                for c in coins:
                    if c <= a and best[a - c] + 1 < best[a]:
                        best[a] = best[a - c] + 1
            return best[amount] if best[amount] != inf else -1
        ''',
        gen="return (rng.randint(0, 80), rng.sample(range(2, 20), rng.randint(0, 4)))",
    ),
    fn(
        "generate_parentheses", 0.45,
        "Return every string of `n` balanced pairs of parentheses, sorted.",
        examples=[((2,), ["(())", "()()"]), ((0,), [""])],
        tests=[((1,), ["()"]), ((3,), ["((()))", "(()())", "(())()", "()(())", "()()()"])],
        ref='''
        def generate_parentheses(n: int) -> list[str]:
            out = []
            def go(s, opened, closed):
                if len(s) == 2 * n:
                    out.append(s)
                    return
                if opened < n:
                    go(s + "(", opened + 1, closed)
                if closed < opened:
                    go(s + ")", opened, closed + 1)
            go("", 0, 0)
            return sorted(out)
        ''',
        gen="return (rng.randint(0, 6),)",
    ),
    fn(
        "letter_combinations", 0.4,
        "Each digit 2-9 of `digits` stands for letters as on a phone keypad (2: abc, 3: def, 4: "
        "ghi, 5: jkl, 6: mno, 7: pqrs, 8: tuv, 9: wxyz). Return every letter string the digits "
        "can spell, sorted; an empty list for empty `digits`.",
        examples=[(("23",), ["ad", "ae", "af", "bd", "be", "bf", "cd", "ce", "cf"]), (("",), [])],
        tests=[(("2",), ["a", "b", "c"]),
               (("79",), ["pw", "px", "py", "pz", "qw", "qx", "qy", "qz", "rw", "rx", "ry", "rz",
                          "sw", "sx", "sy", "sz"])],
        ref='''
        def letter_combinations(digits: str) -> list[str]:
            keys = {"2": "abc", "3": "def", "4": "ghi", "5": "jkl", "6": "mno", "7": "pqrs",
                    "8": "tuv", "9": "wxyz"}
            if not digits:
                return []
            out = [""]
            for d in digits:
                out = [s + c for s in out for c in keys[d]]
            return sorted(out)
        ''',
        gen="return (word(rng, 0, 4, '23456789'),)",
    ),
    fn(
        "tree_depth", 0.35,
        "A binary tree is `None` or a list `[value, left, right]`. Return the number of nodes on "
        "the longest path from the root down to a leaf (0 for `None`).",
        examples=[(([1, [2, None, None], None],), 2), ((None,), 0)],
        tests=[(([1, None, None],), 1), (([1, [2, [3, None, None], None], [4, None, None]],), 3)],
        ref='''
        def tree_depth(tree: list | None) -> int:
            if tree is None:
                return 0
            return 1 + max(tree_depth(tree[1]), tree_depth(tree[2]))
        ''',
        gen='''
        def build(depth):
            if depth == 0 or rng.random() < 0.3:
                return None
            return [rng.randint(0, 9), build(depth - 1), build(depth - 1)]
        return (build(6),)
        ''',
    ),
    fn(
        "tree_inorder", 0.35,
        "A binary tree is `None` or a list `[value, left, right]`. Return its values in in-order "
        "(left subtree, node, right subtree).",
        examples=[(([2, [1, None, None], [3, None, None]],), [1, 2, 3]), ((None,), [])],
        tests=[(([1, None, [2, [3, None, None], None]],), [1, 3, 2]), (([5, None, None],), [5])],
        ref='''
        def tree_inorder(tree: list | None) -> list[int]:
            if tree is None:
                return []
            return tree_inorder(tree[1]) + [tree[0]] + tree_inorder(tree[2])
        ''',
        gen='''
        def build(depth):
            if depth == 0 or rng.random() < 0.3:
                return None
            return [rng.randint(0, 9), build(depth - 1), build(depth - 1)]
        return (build(5),)
        ''',
    ),
    fn(
        "combination_sum", 0.55,
        "Return every combination of values from the distinct positive integers `candidates` "
        "(each may be used any number of times) that adds up to `target`. Each combination is "
        "sorted ascending and the list of combinations is sorted.",
        examples=[(([2, 3, 6, 7], 7), [[2, 2, 3], [7]]), (([2], 1), [])],
        tests=[(([2, 3, 5], 8), [[2, 2, 2, 2], [2, 3, 3], [3, 5]]), (([1], 2), [[1, 1]]), (([7, 3], 0), [[]])],
        ref='''
        def combination_sum(candidates: list[int], target: int) -> list[list[int]]:
            cs = sorted(candidates)
            out = []
            def go(start, remaining, chosen):
                if remaining == 0:
                    out.append(list(chosen))
                    return
                for i in range(start, len(cs)):
                    if cs[i] > remaining:
                        break
                    chosen.append(cs[i])
                    go(i, remaining - cs[i], chosen)
                    chosen.pop()
            go(0, target, [])
            return sorted(out)
        ''',
        gen="return (rng.sample(range(2, 12), rng.randint(1, 4)), rng.randint(0, 20))",
    ),
    fn(
        "climb_stairs", 0.2,
        "Return the number of ways to climb `n` stairs taking 1 or 2 steps at a time "
        "(1 way for `n = 0`).",
        examples=[((2,), 2), ((3,), 3)],
        tests=[((1,), 1), ((0,), 1), ((5,), 8), ((10,), 89), ((40,), 165580141)],
        ref='''
        def climb_stairs(n: int) -> int:
            a, b = 1, 1
            for _ in range(n):
                a, b = b, a + b
            return a
        ''',
        gen="return (rng.randint(0, 80),)",
    ),
    fn(
        "knapsack", 0.6,
        "0/1 knapsack: item `i` has weight `weights[i]` and value `values[i]`. Return the largest "
        "total value of items whose total weight is at most `capacity`, each item used at most once.",
        examples=[(([1, 3, 4, 5], [1, 4, 5, 7], 7), 9), (([], [], 10), 0)],
        tests=[(([5], [10], 4), 0), (([2, 2], [3, 4], 4), 7), (([1, 2, 3], [6, 10, 12], 5), 22)],
        ref='''
        def knapsack(weights: list[int], values: list[int], capacity: int) -> int:
            best = [0] * (capacity + 1)
            for w, v in zip(weights, values):
                for c in range(capacity, w - 1, -1):
                    best[c] = max(best[c], best[c - w] + v)
            return best[capacity]
        ''',
        gen='''
        n = rng.randint(0, 10)
        return (ints(rng, n, 1, 15), ints(rng, n, 1, 30), rng.randint(0, 40))
        ''',
    ),
    fn(
        "lcs_length", 0.5,
        "Return the length of the longest common subsequence of the strings `a` and `b`.",
        examples=[(("abcde", "ace"), 3), (("abc", "def"), 0)],
        tests=[(("", ""), 0), (("abc", "abc"), 3), (("AGGTAB", "GXTXAYB"), 4)],
        ref='''
        def lcs_length(a: str, b: str) -> int:
            prev = [0] * (len(b) + 1)
            for ca in a:
                cur = [0]
                for j, cb in enumerate(b, 1):
                    cur.append(prev[j - 1] + 1 if ca == cb else max(prev[j], cur[j - 1]))
                prev = cur
            return prev[-1]
        ''',
        gen="return (word(rng, 0, 12, 'abcd'), word(rng, 0, 12, 'abcd'))",
    ),
    fn(
        "n_queens", 0.6,
        "Return the number of ways to place `n` queens on an `n` x `n` chessboard so that no two "
        "attack each other (`n <= 9`).",
        examples=[((4,), 2), ((1,), 1)],
        tests=[((2,), 0), ((3,), 0), ((5,), 10), ((6,), 4), ((8,), 92)],
        ref='''
        def n_queens(n: int) -> int:
            def place(row, cols, diag1, diag2):
                if row == n:
                    return 1
                total = 0
                for c in range(n):
                    if c not in cols and row + c not in diag1 and row - c not in diag2:
                        total += place(row + 1, cols | {c}, diag1 | {row + c}, diag2 | {row - c})
                return total
            return place(0, frozenset(), frozenset(), frozenset())
        ''',
        gen="return (rng.randint(1, 8),)",
    ),
    fn(
        "word_break", 0.5,
        "Return `True` if `s` can be split into a sequence of one or more words from `words` "
        "(words may be reused). The empty string can always be split.",
        examples=[(("leetcode", ["leet", "code"]), True), (("catsandog", ["cats", "dog", "sand", "and", "cat"]), False)],
        tests=[(("", ["a"]), True), (("applepenapple", ["apple", "pen"]), True), (("aaaab", ["a", "aa"]), False),
               (("ab", []), False)],
        ref='''
        def word_break(s: str, words: list[str]) -> bool:
            ok = [True] + [False] * len(s)
            for i in range(1, len(s) + 1):
                ok[i] = any(ok[i - len(w)] and s[i - len(w):i] == w for w in words if 0 < len(w) <= i)
            return ok[-1]
        ''',
        gen='''
        vocab = words(rng, rng.randint(1, 4), 1, 3, "ab")
        s = "".join(rng.choice(vocab) for _ in range(rng.randint(0, 5)))
        if rng.random() < 0.4:
            s += rng.choice("abc")
        return (s, vocab)
        ''',
    ),
]
