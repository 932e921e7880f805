"""Dictionary and counting function tasks."""

from ..problems import fn

TOPIC = "dicts"

PROBLEMS = [
    fn(
        "char_frequency", 0.15,
        "Return a dict mapping each character of `s` to the number of times it occurs.",
        examples=[(("hello",), {"h": 1, "e": 1, "l": 2, "o": 1}), (("",), {})],
        tests=[(("aaa",), {"a": 3}), (("abab",), {"a": 2, "b": 2}), (("a b",), {"a": 1, " ": 1, "b": 1})],
        ref='''
        def char_frequency(s: str) -> dict[str, int]:
            out = {}
            for c in s:
                out[c] = out.get(c, 0) + 1
            return out
        ''',
        gen="return (word(rng, 0, 15, 'abcd '),)",
    ),
    fn(
        "word_count", 0.15,
        "Return a dict mapping each whitespace-separated word of `s`, lower-cased, to the number "
        "of times it occurs.",
        examples=[(("the cat the dog",), {"the": 2, "cat": 1, "dog": 1}), (("",), {})],
        tests=[(("A a A",), {"a": 3}), (("x",), {"x": 1}), (("b a b",), {"b": 2, "a": 1})],
        ref='''
        def word_count(s: str) -> dict[str, int]:
            out = {}
            for w in s.lower().split():
                out[w] = out.get(w, 0) + 1
            return out
        ''',
        gen="return (' '.join(rng.choice(['a', 'B', 'cat', 'Cat', 'dog']) for _ in range(rng.randint(0, 8))),)",
    ),
    fn(
        "invert_dict", 0.15,
        "Return the inverse of `d` (each value maps to its key); the values of `d` are distinct.",
        examples=[(({"a": 1, "b": 2},), {1: "a", 2: "b"}), (({},), {})],
        tests=[(({"x": "y"},), {"y": "x"}), (({"k": 0},), {0: "k"}), (({"p": 5, "q": -5},), {5: "p", -5: "q"})],
        ref='''
        def invert_dict(d: dict) -> dict:
            return {v: k for k, v in d.items()}
        ''',
        gen='''
        keys = words(rng, rng.randint(0, 6), 1, 3)
        values = rng.sample(range(-20, 20), len(keys))
        return (dict(zip(keys, values)),)
        ''',
    ),
    fn(
        "group_by_length", 0.25,
        "Return a dict mapping each word length to the list of words of `words` with that "
        "length, in their original order.",
        examples=[((["a", "bb", "c"],), {1: ["a", "c"], 2: ["bb"]}), (([],), {})],
        tests=[((["hello"],), {5: ["hello"]}), ((["ab", "cd", "ab"],), {2: ["ab", "cd", "ab"]}),
               ((["x", "yy", "zzz"],), {1: ["x"], 2: ["yy"], 3: ["zzz"]})],
        ref='''
        def group_by_length(words: list[str]) -> dict[int, list[str]]:
            out = {}
            for w in words:
                out.setdefault(len(w), []).append(w)
            return out
        ''',
        gen="return (words(rng, rng.randint(0, 8), 1, 4),)",
    ),
    fn(
        "merge_dicts_sum", 0.2,
        "Merge the dicts `a` and `b`; for keys in both, the values are added.",
        examples=[(({"a": 1, "b": 2}, {"b": 3, "c": 4}), {"a": 1, "b": 5, "c": 4}), (({}, {}), {})],
        tests=[(({"x": 1}, {}), {"x": 1}), (({}, {"y": -1}), {"y": -1}), (({"k": 5}, {"k": -5}), {"k": 0})],
        ref='''
        def merge_dicts_sum(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
            out = dict(a)
            for k, v in b.items():
                out[k] = out.get(k, 0) + v
            return out
        ''',
        gen='''
        def one():
            return {rng.choice("abcde"): rng.randint(-9, 9) for _ in range(rng.randint(0, 4))}
        return (one(), one())
        ''',
    ),
    fn(
        "top_k_frequent", 0.4,
        "Return the `k` most frequent values of `xs`, most frequent first; values with the same "
        "count in ascending order. Return fewer than `k` if there are fewer distinct values.",
        examples=[(([1, 1, 1, 2, 2, 3], 2), [1, 2]), (([4, 4, 5, 5, 6], 2), [4, 5])],
        tests=[(([], 3), []), (([7], 1), [7]), (([3, 1, 2, 1, 3, 2], 3), [1, 2, 3]), (([5, 5, 9], 5), [5, 9])],
        ref='''
        def top_k_frequent(xs: list[int], k: int) -> list[int]:
            counts = {}
            for x in xs:
                counts[x] = counts.get(x, 0) + 1
            return sorted(counts, key=lambda x: (-counts[x], x))[:k]
        ''',
        gen="return (ints(rng, rng.randint(0, 15), 0, 6), rng.randint(1, 4))",
    ),
    fn(
        "group_anagrams", 0.4,
        "Group the words of `words` that are anagrams of each other. Each group is sorted "
        "alphabetically (keeping repeats) and the groups are sorted by their first word.",
        examples=[((["eat", "tea", "tan", "ate", "nat", "bat"],), [["ate", "eat", "tea"], ["bat"], ["nat", "tan"]]),
                  (([],), [])],
        tests=[((["a"],), [["a"]]), ((["ab", "ba", "ab"],), [["ab", "ab", "ba"]]),
               ((["abc", "xyz", "cab"],), [["abc", "cab"], ["xyz"]])],
        ref='''
        def group_anagrams(words: list[str]) -> list[list[str]]:
            groups = {}
            for w in words:
                groups.setdefault("".join(sorted(w)), []).append(w)
            return sorted(sorted(g) for g in groups.values())
        ''',
        gen="return (words(rng, rng.randint(0, 8), 1, 3, 'abc'),)",
    ),
    fn(
        "first_unique_char", 0.2,
        "Return the index of the first character of `s` that occurs exactly once, or -1.",
        examples=[(("leetcode",), 0), (("aabb",), -1)],
        tests=[(("",), -1), (("loveleetcode",), 2), (("z",), 0), (("abcabd",), 2)],
        ref='''
        def first_unique_char(s: str) -> int:
            counts = {}
            for c in s:
                counts[c] = counts.get(c, 0) + 1
            for i, c in enumerate(s):
                if counts[c] == 1:
                    return i
            return -1
        ''',
        gen="return (word(rng, 0, 10, 'abcde'),)",
    ),
    fn(
        "dict_diff", 0.35,
        "Compare the dicts `a` and `b` (whose values are never `None`). Return a dict with every "
        "key whose value differs or that is in only one of them, mapped to `[value in a, value in "
        "b]`, using `None` for a missing side.",
        examples=[(({"x": 1, "y": 2}, {"x": 1, "y": 3, "z": 4}), {"y": [2, 3], "z": [None, 4]}),
                  (({}, {}), {})],
        tests=[(({"a": 1}, {}), {"a": [1, None]}), (({"a": 1}, {"a": 1}), {}),
               (({"p": "q"}, {"p": "r"}), {"p": ["q", "r"]})],
        ref='''
        def dict_diff(a: dict, b: dict) -> dict:
            out = {}
            for k in a.keys() | b.keys():
                if a.get(k) != b.get(k):
                    out[k] = [a.get(k), b.get(k)]
            return out
        ''',
        gen='''
        def one():
            return {rng.choice("abcdef"): rng.randint(0, 3) for _ in range(rng.randint(0, 5))}
        return (one(), one())
        ''',
    ),
    fn(
        "count_by_key", 0.3,
        "`records` is a list of dicts. Count how often each value of the field `key` occurs "
        "(records without that field are skipped) and return the counts as a dict.",
        examples=[(([{"c": "red"}, {"c": "blue"}, {"c": "red"}], "c"), {"red": 2, "blue": 1}), (([], "c"), {})],
        tests=[(([{"a": 1}, {"b": 2}], "a"), {1: 1}), (([{"k": "x"}, {"k": "x"}], "k"), {"x": 2}),
               (([{"z": 0}], "q"), {})],
        ref='''
        def count_by_key(records: list[dict], key: str) -> dict:
            out = {}
            for r in records:
                if key in r:
                    out[r[key]] = out.get(r[key], 0) + 1
            return out
        ''',
        gen='''
        records = [{rng.choice("ab"): rng.choice(["x", "y", 1])} for _ in range(rng.randint(0, 7))]
        return (records, rng.choice("ab"))
        ''',
    ),
    fn(
        "nested_get", 0.3,
        "Follow the dot-separated `path` (like `a.b.c`) through the nested dicts `d` and return "
        "the value found, or `None` if a key is missing or a value on the way is not a dict.",
        examples=[(({"a": {"b": {"c": 5}}}, "a.b.c"), 5), (({"a": 1}, "a.b"), None)],
        tests=[(({}, "x"), None), (({"x": {"y": [1]}}, "x.y"), [1]), (({"k": {"k": {"k": "v"}}}, "k.k"), {"k": "v"}),
               (({"a": {"b": 2}}, "a"), {"b": 2})],
        ref='''
        def nested_get(d: dict, path: str) -> object:
            cur = d
            for key in path.split("."):
                if not isinstance(cur, dict) or key not in cur:
                    return None
                cur = cur[key]
            return cur
        ''',
        gen='''
        def build(depth):
            if depth == 0 or rng.random() < 0.3:
                return rng.randint(0, 9)
            return {rng.choice("ab"): build(depth - 1) for _ in range(rng.randint(1, 2))}
        return (build(3), ".".join(rng.choice("abc") for _ in range(rng.randint(1, 3))))
        ''',
    ),
    fn(
        "pair_sums_count", 0.35,
        "Return the number of index pairs `i < j` with `xs[i] + xs[j] == target`.",
        examples=[(([1, 5, 7, -1, 5], 6), 3), (([], 0), 0)],
        tests=[(([1, 1, 1, 1], 2), 6), (([0], 0), 0), (([2, 4, 3, 3], 6), 2)],
        ref='''
        def pair_sums_count(xs: list[int], target: int) -> int:
            seen = {}
            count = 0
            for x in xs:
                count += seen.get(target - x, 0)
                seen[x] = seen.get(x, 0) + 1
            return count
        ''',
        gen="return (ints(rng, rng.randint(0, 20), -5, 5), rng.randint(-4, 4))",
    ),
    fn(
        "inventory_update", 0.35,
        "Apply `orders`, a list of `[item, change]` pairs, to the stock dict `stock` (item -> "
        "quantity) in order, then drop every item whose quantity is 0 or less. Return the new "
        "stock; do not modify `stock` itself.",
        examples=[(({"apple": 3}, [["apple", -1], ["pear", 2]]), {"apple": 2, "pear": 2}), (({}, []), {})],
        tests=[(({"x": 1}, [["x", -1]]), {}), (({"a": 5}, [["a", -10], ["a", 7]]), {"a": 2}),
               (({}, [["b", 3], ["b", 3]]), {"b": 6})],
        ref='''
        def inventory_update(stock: dict[str, int], orders: list[list]) -> dict[str, int]:
            out = dict(stock)
            for item, change in orders:
                out[item] = out.get(item, 0) + change
            return {k: v for k, v in out.items() if v > 0}
        ''',
        gen='''
        stock = {rng.choice("abcd"): rng.randint(1, 5) for _ in range(rng.randint(0, 3))}
        orders = [[rng.choice("abcd"), rng.randint(-4, 4)] for _ in range(rng.randint(0, 5))]
        return (stock, orders)
        ''',
    ),
    fn(
        "sort_keys_by_value", 0.2,
        "Return the keys of `d` sorted by value, largest first; keys with equal values in "
        "ascending order.",
        examples=[(({"a": 2, "b": 3, "c": 1},), ["b", "a", "c"]), (({},), [])],
        tests=[(({"x": 1, "y": 1},), ["x", "y"]), (({"k": 0},), ["k"]), (({"b": 5, "a": 5, "c": 9},), ["c", "a", "b"])],
        ref='''
        def sort_keys_by_value(d: dict[str, int]) -> list[str]:
            return sorted(d, key=lambda k: (-d[k], k))
        ''',
        gen="return ({w: rng.randint(0, 4) for w in words(rng, rng.randint(0, 6), 1, 2)},)",
    ),
    fn(
        "dict_from_pairs", 0.05,
        "Build a dict from `pairs`, a list of `[key, value]` pairs; a later pair wins over an "
        "earlier one with the same key.",
        examples=[(([["a", 1], ["b", 2]],), {"a": 1, "b": 2}), (([],), {})],
        tests=[(([["a", 1], ["a", 2]],), {"a": 2}), (([["x", None]],), {"x": None}), (([[1, "one"]],), {1: "one"})],
        ref='''
        def dict_from_pairs(pairs: list[list]) -> dict:
            return {k: v for k, v in pairs}
        ''',
        gen="return ([[rng.choice('abc'), rng.randint(0, 9)] for _ in range(rng.randint(0, 5))],)",
    ),
    fn(
        "anagram_signature_counts", 0.3,
        "Return a dict mapping each word of `words` to how many words in the list (including "
        "itself) are anagrams of it.",
        examples=[((["ab", "ba", "c"],), {"ab": 2, "ba": 2, "c": 1}), (([],), {})],
        tests=[((["aa"],), {"aa": 1}), ((["abc", "cab", "bca", "x"],), {"abc": 3, "cab": 3, "bca": 3, "x": 1}),
               ((["a", "a"],), {"a": 2})],
        ref='''
        def anagram_signature_counts(words: list[str]) -> dict[str, int]:
            sig = {}
            for w in words:
                key = "".join(sorted(w))
                sig[key] = sig.get(key, 0) + 1
            return {w: sig["".join(sorted(w))] for w in words}
        ''',
        gen="return (words(rng, rng.randint(0, 7), 1, 3, 'abc'),)",
    ),
]
