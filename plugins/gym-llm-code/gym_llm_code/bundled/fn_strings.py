"""String manipulation function tasks."""

from ..problems import fn

TOPIC = "strings"

PROBLEMS = [
    fn(
        "count_vowels", 0.05,
        "Return how many vowels (a, e, i, o, u, in either case) the string `s` contains.",
        examples=[(("hello",), 2), (("AEIOU xyz",), 5)],
        tests=[(("",), 0), (("rhythm",), 0), (("Programming Is Fun",), 5)],
        ref='''
        def count_vowels(s: str) -> int:
            return sum(1 for c in s.lower() if c in "aeiou")
        ''',
        gen="return (word(rng, 0, 20, LOWER + UPPER + ' '),)",
    ),
    fn(
        "reverse_words", 0.1,
        "Return the words of `s` (separated by any whitespace) in reverse order, joined by single spaces.",
        examples=[(("hello world",), "world hello"), (("  one  ",), "one")],
        tests=[(("a b c",), "c b a"), (("",), ""), (("x\ty\nz",), "z y x"),
               (("The quick  brown fox",), "fox brown quick The")],
        ref='''
        def reverse_words(s: str) -> str:
            return " ".join(reversed(s.split()))
        ''',
        gen="return (' ' * rng.randint(0, 2) + '  '.join(words(rng, rng.randint(0, 6))),)",
    ),
    fn(
        "is_palindrome", 0.15,
        "Return `True` if `s` reads the same forwards and backwards when only its letters and "
        "digits are kept and case is ignored.",
        examples=[(("A man, a plan, a canal: Panama",), True), (("hello",), False)],
        tests=[(("",), True), (("No 'x' in Nixon",), True), (("ab",), False), (("12321",), True),
               (("0P",), False)],
        ref='''
        def is_palindrome(s: str) -> bool:
            kept = [c.lower() for c in s if c.isalnum()]
            return kept == kept[::-1]
        ''',
        gen='''
        half = word(rng, 0, 5, "abcAB1 ,")
        middle = rng.choice(["", "x", "Y"])
        s = half + middle + half[::-1]
        if rng.random() < 0.4:
            s = s + rng.choice("pqr")
        return (s,)
        ''',
    ),
    fn(
        "capitalize_words", 0.1,
        "Return `s` with the first character of every space-separated word in upper case and the "
        "rest of the word in lower case. Keep the spaces exactly as they are.",
        examples=[(("hello world",), "Hello World"), (("hELLO  wORLD",), "Hello  World")],
        tests=[(("",), ""), (("a",), "A"), (("123abc def",), "123abc Def"), ((" x ",), " X ")],
        ref='''
        def capitalize_words(s: str) -> str:
            return " ".join(w[:1].upper() + w[1:].lower() for w in s.split(" "))
        ''',
        gen="return (word(rng, 0, 16, LOWER + UPPER + '  '),)",
    ),
    fn(
        "run_length_encode", 0.3,
        "Run-length encode `s`: every maximal run of the same character becomes the character "
        "followed by the run length, e.g. `aaab` becomes `a3b1`.",
        examples=[(("aaabcc",), "a3b1c2"), (("",), "")],
        tests=[(("a",), "a1"), (("abab",), "a1b1a1b1"), (("zzzzzzzzzzzz",), "z12"),
               (("aabbaa",), "a2b2a2")],
        ref='''
        def run_length_encode(s: str) -> str:
            out = []
            i = 0
            while i < len(s):
                j = i
                while j < len(s) and s[j] == s[i]:
                    j += 1
                out.append(f"{s[i]}{j - i}")
                i = j
            return "".join(out)
        ''',
        gen="return (''.join(rng.choice('abc') * rng.randint(1, 12) for _ in range(rng.randint(0, 5))),)",
    ),
    fn(
        "run_length_decode", 0.35,
        "Decode a run-length encoded string: each lower-case letter is followed by its count "
        "(one or more digits), e.g. `a3b1` becomes `aaab`. Counts may be 0.",
        examples=[(("a3b1c2",), "aaabcc"), (("x10",), "xxxxxxxxxx")],
        tests=[(("",), ""), (("a1",), "a"), (("b2a12",), "bbaaaaaaaaaaaa"), (("q0r2",), "rr")],
        ref='''
        def run_length_decode(s: str) -> str:
            out = []
            i = 0
            while i < len(s):
                ch = s[i]
                j = i + 1
                while j < len(s) and s[j].isdigit():
                    j += 1
                out.append(ch * int(s[i + 1:j]))
                i = j
            return "".join(out)
        ''',
        gen="return (''.join(rng.choice(LOWER) + str(rng.randint(0, 15)) for _ in range(rng.randint(0, 5))),)",
    ),
    fn(
        "caesar_shift", 0.25,
        "Shift every letter of `s` by `k` places in the alphabet, wrapping around and keeping its "
        "case; other characters are unchanged. `k` may be negative or larger than 26.",
        examples=[(("abc", 1), "bcd"), (("Hello, World!", 3), "Khoor, Zruog!")],
        tests=[(("xyz", 3), "abc"), (("ABC", -1), "ZAB"), (("a", 52), "a"), (("Zz 9", 27), "Aa 9")],
        ref='''
        def caesar_shift(s: str, k: int) -> str:
            out = []
            for c in s:
                if "a" <= c <= "z":
                    out.append(chr((ord(c) - 97 + k) % 26 + 97))
                elif "A" <= c <= "Z":
                    out.append(chr((ord(c) - 65 + k) % 26 + 65))
                else:
                    out.append(c)
            return "".join(out)
        ''',
        gen="return (word(rng, 0, 15, LOWER + UPPER + ' ,!7'), rng.randint(-60, 60))",
    ),
    fn(
        "is_anagram", 0.15,
        "Return `True` if `a` and `b` are anagrams of each other, ignoring case and spaces.",
        examples=[(("listen", "silent"), True), (("abc", "abd"), False)],
        tests=[(("Dormitory", "dirty room"), True), (("", ""), True), (("aab", "abb"), False),
               (("a b", "ba"), True)],
        ref='''
        def is_anagram(a: str, b: str) -> bool:
            def key(s):
                return sorted(s.replace(" ", "").lower())
            return key(a) == key(b)
        ''',
        gen='''
        a = word(rng, 0, 8, "abcdeAB ")
        b = list(a)
        rng.shuffle(b)
        b = "".join(b)
        if rng.random() < 0.5:
            b = b + rng.choice("ab")
        return (a, b)
        ''',
    ),
    fn(
        "longest_common_prefix", 0.3,
        "Return the longest string that is a prefix of every string in `words` "
        "(the empty string for an empty list).",
        examples=[((["flower", "flow", "flight"],), "fl"), ((["dog", "racecar", "car"],), "")],
        tests=[(([],), ""), ((["alone"],), "alone"), ((["ab", "abc", "abcd"],), "ab"),
               ((["same", "same"],), "same")],
        ref='''
        def longest_common_prefix(words: list[str]) -> str:
            if not words:
                return ""
            prefix = words[0]
            for w in words[1:]:
                while not w.startswith(prefix):
                    prefix = prefix[:-1]
            return prefix
        ''',
        gen='''
        stem = word(rng, 0, 4, "ab")
        return ([stem + word(rng, 0, 3, "ab") for _ in range(rng.randint(0, 5))],)
        ''',
    ),
    fn(
        "compress_spaces", 0.05,
        "Return `s` with every run of spaces replaced by a single space and no leading or "
        "trailing spaces.",
        examples=[(("hello    world",), "hello world"), (("  a   b ",), "a b")],
        tests=[(("",), ""), (("   ",), ""), (("x",), "x"), (("a  b  c",), "a b c")],
        ref='''
        def compress_spaces(s: str) -> str:
            return " ".join(part for part in s.split(" ") if part)
        ''',
        gen="return (word(rng, 0, 20, 'ab   '),)",
    ),
    fn(
        "most_common_char", 0.3,
        "Return the character that occurs most often in `s`; on a tie, the one whose first "
        "occurrence comes earliest. Return the empty string for an empty `s`.",
        examples=[(("banana",), "a"), (("abcabc",), "a")],
        tests=[(("",), ""), (("zzyy",), "z"), (("mississippi",), "i"), (("x",), "x")],
        ref='''
        def most_common_char(s: str) -> str:
            best = ""
            best_count = 0
            for c in s:
                n = s.count(c)
                if n > best_count:
                    best, best_count = c, n
            return best
        ''',
        gen="return (word(rng, 0, 15, 'abcd'),)",
    ),
    fn(
        "snake_to_camel", 0.2,
        "Convert a snake_case identifier to camelCase: drop the underscores and upper-case the "
        "first letter of every part after the first.",
        examples=[(("hello_world",), "helloWorld"), (("make_it_work_now",), "makeItWorkNow")],
        tests=[(("single",), "single"), (("",), ""), (("a_b_c",), "aBC"), (("trailing_",), "trailing"),
               (("double__under",), "doubleUnder")],
        ref='''
        def snake_to_camel(s: str) -> str:
            parts = s.split("_")
            return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])
        ''',
        gen="return ('_'.join(words(rng, rng.randint(1, 4), 1, 5)),)",
    ),
    fn(
        "camel_to_snake", 0.25,
        "Convert a camelCase identifier to snake_case: every upper-case letter becomes an "
        "underscore followed by its lower-case form, except that a leading upper-case letter gets "
        "no underscore.",
        examples=[(("helloWorld",), "hello_world"), (("makeItWork",), "make_it_work")],
        tests=[(("x",), "x"), (("",), ""), (("ABC",), "a_b_c"), (("alreadysnake",), "alreadysnake"),
               (("Upper",), "upper")],
        ref='''
        def camel_to_snake(s: str) -> str:
            out = []
            for i, c in enumerate(s):
                if c.isupper():
                    if i > 0:
                        out.append("_")
                    out.append(c.lower())
                else:
                    out.append(c)
            return "".join(out)
        ''',
        gen="return (word(rng, 0, 12, 'abcdXYZ'),)",
    ),
    fn(
        "count_substring", 0.2,
        "Return how many times the non-empty string `sub` occurs in `s`, counting overlapping "
        "occurrences.",
        examples=[(("aaaa", "aa"), 3), (("abcabc", "abc"), 2)],
        tests=[(("", "a"), 0), (("abababa", "aba"), 3), (("xyz", "xyzz"), 0), (("aaa", "a"), 3)],
        ref='''
        def count_substring(s: str, sub: str) -> int:
            return sum(1 for i in range(len(s) - len(sub) + 1) if s[i:i + len(sub)] == sub)
        ''',
        gen="return (word(rng, 0, 20, 'ab'), word(rng, 1, 3, 'ab'))",
    ),
    fn(
        "remove_duplicate_chars", 0.15,
        "Return `s` with only the first occurrence of every character kept.",
        examples=[(("banana",), "ban"), (("aabbcc",), "abc")],
        tests=[(("",), ""), (("abc",), "abc"), (("Aa",), "Aa"), (("mississippi",), "misp")],
        ref='''
        def remove_duplicate_chars(s: str) -> str:
            return "".join(dict.fromkeys(s))
        ''',
        gen="return (word(rng, 0, 15, 'abcdeAB'),)",
    ),
    fn(
        "word_lengths", 0.05,
        "Return the lengths of the whitespace-separated words of `s`, in order.",
        examples=[(("hi there",), [2, 5]), (("",), [])],
        tests=[(("a bb ccc",), [1, 2, 3]), (("  x  ",), [1]), (("hello",), [5])],
        ref='''
        def word_lengths(s: str) -> list[int]:
            return [len(w) for w in s.split()]
        ''',
        gen="return (sentence(rng),)",
    ),
    fn(
        "pig_latin", 0.3,
        "Translate the lower-case word `w` to Pig Latin: if it starts with a vowel (a, e, i, o, u) "
        "append `way`; otherwise move the leading consonants (everything before the first vowel) "
        "to the end and append `ay`. A word with no vowel just gets `ay` appended.",
        examples=[(("pig",), "igpay"), (("apple",), "appleway")],
        tests=[(("string",), "ingstray"), (("rhythm",), "rhythmay"), (("eat",), "eatway"),
               (("b",), "bay"), (("queen",), "ueenqay")],
        ref='''
        def pig_latin(w: str) -> str:
            for i, c in enumerate(w):
                if c in "aeiou":
                    return w + "way" if i == 0 else w[i:] + w[:i] + "ay"
            return w + "ay"
        ''',
        gen="return (word(rng, 1, 8),)",
    ),
    fn(
        "longest_word", 0.1,
        "Return the longest whitespace-separated word of `s` (the first one on a tie), or the "
        "empty string if there is none.",
        examples=[(("the quick brown fox",), "quick"), (("a bb cc",), "bb")],
        tests=[(("",), ""), (("same size",), "same"), (("one",), "one"), (("x yy zzz yy",), "zzz")],
        ref='''
        def longest_word(s: str) -> str:
            best = ""
            for w in s.split():
                if len(w) > len(best):
                    best = w
            return best
        ''',
        gen="return (sentence(rng),)",
    ),
    fn(
        "interleave", 0.15,
        "Interleave the characters of `a` and `b` (`a[0] b[0] a[1] b[1] ...`); when one string "
        "runs out, append the rest of the other.",
        examples=[(("abc", "12"), "a1b2c"), (("", "xy"), "xy")],
        tests=[(("ab", "cd"), "acbd"), (("a", ""), "a"), (("", ""), ""), (("x", "123"), "x123")],
        ref='''
        def interleave(a: str, b: str) -> str:
            out = []
            for i in range(max(len(a), len(b))):
                out.append(a[i:i + 1])
                out.append(b[i:i + 1])
            return "".join(out)
        ''',
        gen="return (word(rng, 0, 6), word(rng, 0, 6, DIGITS))",
    ),
    fn(
        "rotate_string", 0.15,
        "Rotate `s` to the right by `k` positions (`k` may be negative, meaning to the left, or "
        "larger than the length).",
        examples=[(("abcde", 2), "deabc"), (("abc", 0), "abc")],
        tests=[(("abc", 3), "abc"), (("abc", 4), "cab"), (("", 5), ""), (("abcd", -1), "bcda")],
        ref='''
        def rotate_string(s: str, k: int) -> str:
            if not s:
                return s
            k %= len(s)
            return s[-k:] + s[:-k] if k else s
        ''',
        gen="return (word(rng, 0, 8), rng.randint(-10, 10))",
    ),
    fn(
        "is_isogram", 0.1,
        "Return `True` if no letter occurs more than once in `s`, ignoring case; spaces and "
        "hyphens may repeat.",
        examples=[(("lumberjacks",), True), (("hello",), False)],
        tests=[(("",), True), (("six-year-old",), True), (("Alphabet",), False),
               (("Dermatoglyphics",), True)],
        ref='''
        def is_isogram(s: str) -> bool:
            letters = [c.lower() for c in s if c not in " -"]
            return len(letters) == len(set(letters))
        ''',
        gen="return (word(rng, 0, 8, LOWER[:12] + 'AB -'),)",
    ),
    fn(
        "acronym", 0.1,
        "Return the acronym of `s`: the upper-cased first letter of every word, where words are "
        "separated by spaces or hyphens.",
        examples=[(("Portable Network Graphics",), "PNG"),
                  (("complementary metal-oxide semiconductor",), "CMOS")],
        tests=[(("",), ""), (("as soon as possible",), "ASAP"),
               (("hyper-text markup language",), "HTML")],
        ref='''
        def acronym(s: str) -> str:
            return "".join(w[0].upper() for w in s.replace("-", " ").split())
        ''',
        gen="return (rng.choice([' ', '-']).join(words(rng, rng.randint(0, 5))),)",
    ),
    fn(
        "longest_palindromic_substring", 0.6,
        "Return the longest contiguous substring of `s` that is a palindrome; on a tie return "
        "the leftmost one.",
        examples=[(("babad",), "bab"), (("cbbd",), "bb")],
        tests=[(("",), ""), (("a",), "a"), (("forgeeksskeegfor",), "geeksskeeg"), (("abc",), "a")],
        ref='''
        def longest_palindromic_substring(s: str) -> str:
            best = s[:1]
            for center in range(2 * len(s) - 1):
                lo, hi = center // 2, (center + 1) // 2
                while lo >= 0 and hi < len(s) and s[lo] == s[hi]:
                    lo -= 1
                    hi += 1
                if hi - lo - 1 > len(best):  # centers go left to right: ties keep the leftmost
                    best = s[lo + 1:hi]
            return best
        ''',
        gen="return (word(rng, 0, 25, 'abc'),)",
    ),
    fn(
        "zigzag_convert", 0.55,
        "Write `s` in a zigzag on `rows` rows (down the first column, then diagonally up, and so "
        "on) and return the rows read left to right, top to bottom. With one row, return `s`.",
        examples=[(("PAYPALISHIRING", 3), "PAHNAPLSIIGYIR"), (("PAYPALISHIRING", 4), "PINALSIGYAHRPI")],
        tests=[(("AB", 1), "AB"), (("", 3), ""), (("ABCD", 2), "ACBD"), (("A", 5), "A")],
        ref='''
        def zigzag_convert(s: str, rows: int) -> str:
            if rows == 1:
                return s
            lines = [""] * rows
            row, step = 0, 1
            for c in s:
                lines[row] += c
                if row == 0:
                    step = 1
                elif row == rows - 1:
                    step = -1
                row += step
            return "".join(lines)
        ''',
        gen="return (word(rng, 0, 20, UPPER), rng.randint(1, 6))",
    ),
    fn(
        "wrap_text", 0.45,
        "Greedily wrap the words of `s` into lines of at most `width` characters (words joined by "
        "single spaces); a word longer than `width` goes on a line of its own. Return the lines.",
        examples=[(("the quick brown fox", 10), ["the quick", "brown fox"]),
                  (("a b c", 1), ["a", "b", "c"])],
        tests=[(("", 5), []), (("hello", 3), ["hello"]), (("aa bb cc dd", 5), ["aa bb", "cc dd"]),
               (("one two three four five", 9), ["one two", "three", "four five"])],
        ref='''
        def wrap_text(s: str, width: int) -> list[str]:
            lines = []
            line = ""
            for w in s.split():
                if not line:
                    line = w
                elif len(line) + 1 + len(w) <= width:
                    line += " " + w
                else:
                    lines.append(line)
                    line = w
            if line:
                lines.append(line)
            return lines
        ''',
        gen="return (sentence(rng, 0, 12), rng.randint(1, 15))",
    ),
    fn(
        "vowel_positions", 0.1,
        "Return the 0-based indices of the lower-case vowels (a, e, i, o, u) in `s`.",
        examples=[(("hello",), [1, 4]), (("xyz",), [])],
        tests=[(("",), []), (("aeiou",), [0, 1, 2, 3, 4]), (("A cat",), [3])],
        ref='''
        def vowel_positions(s: str) -> list[int]:
            return [i for i, c in enumerate(s) if c in "aeiou"]
        ''',
        gen="return (word(rng, 0, 15, LOWER + 'AE '),)",
    ),
    fn(
        "swap_case", 0.05,
        "Return `s` with upper-case letters made lower-case and lower-case letters made upper-case.",
        examples=[(("Hello",), "hELLO"), (("abc DEF",), "ABC def")],
        tests=[(("",), ""), (("123",), "123"), (("aBc",), "AbC")],
        ref='''
        def swap_case(s: str) -> str:
            return s.swapcase()
        ''',
        gen="return (word(rng, 0, 12, LOWER + UPPER + DIGITS + ' '),)",
    ),
    fn(
        "char_at_most_k", 0.4,
        "Return the length of the longest contiguous substring of `s` that contains at most `k` "
        "distinct characters.",
        examples=[(("eceba", 2), 3), (("aa", 1), 2)],
        tests=[(("", 2), 0), (("abc", 0), 0), (("abaccc", 2), 4), (("abcabc", 3), 6)],
        ref='''
        def char_at_most_k(s: str, k: int) -> int:
            counts = {}
            best = lo = 0
            for hi, c in enumerate(s):
                counts[c] = counts.get(c, 0) + 1
                while len(counts) > k:
                    counts[s[lo]] -= 1
                    if counts[s[lo]] == 0:
                        del counts[s[lo]]
                    lo += 1
                best = max(best, hi - lo + 1)
            return best
        ''',
        gen="return (word(rng, 0, 20, 'abcd'), rng.randint(0, 4))",
    ),
]
