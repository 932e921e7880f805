"""Parsing and formatting function tasks."""

from ..problems import fn

TOPIC = "parsing"

PROBLEMS = [
    fn(
        "valid_brackets", 0.3,
        "`s` consists of the characters `()[]{}`. Return `True` if every bracket is closed by the "
        "matching bracket in the right order.",
        examples=[(("()[]{}",), True), (("(]",), False)],
        tests=[(("",), True), (("([{}])",), True), (("((",), False), (("){",), False), (("([)]",), False)],
        ref='''
        def valid_brackets(s: str) -> bool:
            pairs = {")": "(", "]": "[", "}": "{"}
            stack = []
            for c in s:
                if c in pairs:
                    if not stack or stack.pop() != pairs[c]:
                        return False
                else:
                    stack.append(c)
            return not stack
        ''',
        gen='''
        def balanced(depth):
            out = ""
            for _ in range(rng.randint(0, 2)):
                o, c = rng.choice(["()", "[]", "{}"])
                out += o + (balanced(depth - 1) if depth else "") + c
            return out
        s = balanced(3)
        if s and rng.random() < 0.5:
            i = rng.randrange(len(s))
            s = s[:i] + rng.choice("()[]{}") + s[i + 1:]
        return (s,)
        ''',
    ),
    fn(
        "from_roman", 0.35,
        "Return the value of the Roman numeral `s` (1 to 3999, subtractive notation).",
        examples=[(("MCMXCIV",), 1994), (("III",), 3)],
        tests=[(("IV",), 4), (("LVIII",), 58), (("MMMCMXCIX",), 3999), (("XL",), 40)],
        ref='''
        def from_roman(s: str) -> int:
            values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
            total = 0
            for i, c in enumerate(s):
                v = values[c]
                total += -v if i + 1 < len(s) and values[s[i + 1]] > v else v
            return total
        ''',
        gen='''
        n = rng.randint(1, 3999)
        table = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
                 (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
        out = ""
        for value, symbol in table:
            while n >= value:
                out += symbol
                n -= value
        return (out,)
        ''',
    ),
    fn(
        "eval_rpn", 0.4,
        "Evaluate the integer expression in reverse Polish notation given as a list of tokens "
        "(integers and the operators `+ - * /`). Division truncates toward zero; it never "
        "divides by zero.",
        examples=[((["2", "1", "+", "3", "*"],), 9), ((["4", "13", "5", "/", "+"],), 6)],
        tests=[((["5"],), 5), ((["3", "-4", "*"],), -12), ((["7", "-2", "/"],), -3),
               ((["10", "6", "9", "3", "+", "-11", "*", "/", "*", "17", "+", "5", "+"],), 22)],
        ref='''
        def eval_rpn(tokens: list[str]) -> int:
            stack = []
            for t in tokens:
                if t in ("+", "-", "*", "/"):
                    b, a = stack.pop(), stack.pop()
                    if t == "+":
                        stack.append(a + b)
                    elif t == "-":
                        stack.append(a - b)
                    elif t == "*":
                        stack.append(a * b)
                    else:
                        q = abs(a) // abs(b)
                        stack.append(q if (a >= 0) == (b >= 0) else -q)
                else:
                    stack.append(int(t))
            return stack[0]
        ''',
        gen='''
        def build(depth):
            if depth == 0 or rng.random() < 0.3:
                return [str(rng.randint(-9, 9))]
            op = rng.choice("+-*/")
            right = build(depth - 1)
            if op == "/":
                right = [str(rng.choice([-3, -2, -1, 1, 2, 3, 4, 7]))]
            return build(depth - 1) + right + [op]
        return (build(4),)
        ''',
    ),
    fn(
        "parse_key_values", 0.3,
        "Parse `s` of the form `key=value;key=value;...` into a dict. Split each pair at its first "
        "`=`, strip spaces around keys and values, skip empty segments; a later key wins.",
        examples=[(("a=1;b=2",), {"a": "1", "b": "2"}), (("",), {})],
        tests=[((" x = hello ; ;y=",), {"x": "hello", "y": ""}), (("k=v=w",), {"k": "v=w"}),
               (("a=1;a=2",), {"a": "2"})],
        ref='''
        def parse_key_values(s: str) -> dict[str, str]:
            out = {}
            for part in s.split(";"):
                if not part.strip():
                    continue
                key, _, value = part.partition("=")
                out[key.strip()] = value.strip()
            return out
        ''',
        gen='''
        parts = [f"{rng.choice('abc')}{' ' * rng.randint(0, 1)}={word(rng, 0, 3)}" for _ in range(rng.randint(0, 4))]
        return (";".join(parts + [""] * rng.randint(0, 1)),)
        ''',
    ),
    fn(
        "calculate", 0.65,
        "Evaluate the arithmetic expression `expr` made of non-negative integers, `+`, `-`, `*`, "
        "parentheses and spaces, with the usual precedence (`*` before `+` and `-`, left to "
        "right otherwise). Do not use `eval`.",
        examples=[(("1 + 2 * 3",), 7), (("(1 + 2) * 3",), 9)],
        tests=[(("42",), 42), (("2*(3+4)*5",), 70), (("10 - 4 - 3",), 3), (("((2))",), 2), (("100-2*3*4+1",), 77)],
        ref='''
        def calculate(expr: str) -> int:
            tokens = []
            i = 0
            while i < len(expr):
                c = expr[i]
                if c.isdigit():
                    j = i
                    while j < len(expr) and expr[j].isdigit():
                        j += 1
                    tokens.append(int(expr[i:j]))
                    i = j
                    continue
                if c != " ":
                    tokens.append(c)
                i += 1
            pos = 0

            def atom():
                nonlocal pos
                t = tokens[pos]
                pos += 1
                if t == "(":
                    v = total()
                    pos += 1
                    return v
                return t

            def product():
                nonlocal pos
                v = atom()
                while pos < len(tokens) and tokens[pos] == "*":
                    pos += 1
                    v *= atom()
                return v

            def total():
                nonlocal pos
                v = product()
                while pos < len(tokens) and tokens[pos] in ("+", "-"):
                    op = tokens[pos]
                    pos += 1
                    v = v + product() if op == "+" else v - product()
                return v

            return total()
        ''',
        gen='''
        def build(depth):
            if depth == 0 or rng.random() < 0.3:
                return str(rng.randint(0, 20))
            left, right = build(depth - 1), build(depth - 1)
            op = rng.choice(["+", "-", "*"])
            s = f"{left}{rng.choice(['', ' '])}{op}{rng.choice(['', ' '])}{right}"
            return f"({s})" if rng.random() < 0.4 else s
        return (build(4),)
        ''',
    ),
    fn(
        "parse_csv_line", 0.5,
        "Split one CSV line into its fields: fields are separated by commas; a field in double "
        "quotes may contain commas, and `\"\"` inside it stands for one double quote.",
        examples=[(("a,b,c",), ["a", "b", "c"]), (('"x,y",z',), ["x,y", "z"])],
        tests=[(("",), [""]), (("a,,b",), ["a", "", "b"]), (('"say ""hi""",1',), ['say "hi"', "1"]),
               (("one",), ["one"])],
        ref='''
        def parse_csv_line(line: str) -> list[str]:
            fields = []
            cur = []
            quoted = False
            i = 0
            while i < len(line):
                c = line[i]
                if quoted:
                    if c == '"' and line[i + 1:i + 2] == '"':
                        cur.append('"')
                        i += 1
                    elif c == '"':
                        quoted = False
                    else:
                        cur.append(c)
                elif c == '"':
                    quoted = True
                elif c == ",":
                    fields.append("".join(cur))
                    cur = []
                else:
                    cur.append(c)
                i += 1
            fields.append("".join(cur))
            return fields
        ''',
        gen='''
        fields = []
        for _ in range(rng.randint(1, 4)):
            text = word(rng, 0, 5, 'ab,"')
            if "," in text or '"' in text or rng.random() < 0.2:
                text = '"' + text.replace('"', '""') + '"'
            fields.append(text)
        return (",".join(fields),)
        ''',
    ),
    fn(
        "parse_duration", 0.35,
        "Parse a duration like `1h30m15s` (hours, minutes and seconds, each part optional but in "
        "that order) and return the total number of seconds; the empty string is 0.",
        examples=[(("1h30m",), 5400), (("45s",), 45)],
        tests=[(("",), 0), (("2h",), 7200), (("1h1m1s",), 3661), (("90m",), 5400)],
        ref='''
        def parse_duration(s: str) -> int:
            total = 0
            number = ""
            for c in s:
                if c.isdigit():
                    number += c
                else:
                    total += int(number) * {"h": 3600, "m": 60, "s": 1}[c]
                    number = ""
            return total
        ''',
        gen='''
        s = ""
        for unit in "hms":
            if rng.random() < 0.6:
                s += f"{rng.randint(0, 99)}{unit}"
        return (s,)
        ''',
    ),
    fn(
        "is_valid_ipv4", 0.35,
        "Return `True` if `s` is a dotted IPv4 address: exactly four parts, each a decimal number "
        "0-255 written with digits only and without leading zeros (except `0` itself).",
        examples=[(("192.168.0.1",), True), (("256.1.1.1",), False)],
        tests=[(("",), False), (("1.2.3",), False), (("01.2.3.4",), False), (("0.0.0.0",), True),
               (("1.2.3.4.5",), False), (("a.b.c.d",), False), (("255.255.255.255",), True), (("1.2..3",), False)],
        ref='''
        def is_valid_ipv4(s: str) -> bool:
            parts = s.split(".")
            if len(parts) != 4:
                return False
            for p in parts:
                if not p or not p.isdigit() or not p.isascii() or (len(p) > 1 and p[0] == "0") or int(p) > 255:
                    return False
            return True
        ''',
        gen='''
        parts = [str(rng.choice([rng.randint(0, 255), rng.randint(0, 300)])) for _ in range(rng.choice([3, 4, 4, 4, 5]))]
        if rng.random() < 0.2:
            parts[0] = "0" + parts[0]
        return (".".join(parts),)
        ''',
    ),
    fn(
        "parse_query_string", 0.4,
        "Parse the URL query string `s` (`a=1&b=2&a=3`) into a dict mapping each key to the list "
        "of its values in order. A `+` in a value means a space; a part without `=` has the value "
        "`\"\"`; empty parts are skipped. No percent-decoding is needed.",
        examples=[(("a=1&b=2&a=3",), {"a": ["1", "3"], "b": ["2"]}), (("",), {})],
        tests=[(("q=hello+world",), {"q": ["hello world"]}), (("flag",), {"flag": [""]}),
               (("x=&y=1",), {"x": [""], "y": ["1"]}), (("a=1&&a=2",), {"a": ["1", "2"]})],
        ref='''
        def parse_query_string(s: str) -> dict[str, list[str]]:
            out = {}
            for part in s.split("&"):
                if not part:
                    continue
                key, _, value = part.partition("=")
                out.setdefault(key, []).append(value.replace("+", " "))
            return out
        ''',
        gen='''
        parts = []
        for _ in range(rng.randint(0, 4)):
            key = rng.choice("abc")
            parts.append(key if rng.random() < 0.15 else f"{key}={word(rng, 0, 4, 'xy+')}")
        return ("&".join(parts),)
        ''',
    ),
    fn(
        "count_tags", 0.4,
        "Count the opening tags in the HTML-like string `html` by tag name (lower-cased). Opening "
        "tags look like `<name>`, `<name attr=\"...\">` or `<name/>`; closing tags `</name>` are "
        "not counted. Tag names are letters only.",
        examples=[(("<a><b></b></a>",), {"a": 1, "b": 1}), (("text",), {})],
        tests=[(("<p>x</p><p>y</p>",), {"p": 2}), (("<br/><BR>",), {"br": 2}),
               (('<div class="x"><img src="y"/></div>',), {"div": 1, "img": 1})],
        ref='''
        import re

        def count_tags(html: str) -> dict[str, int]:
            out = {}
            for name in re.findall(r"<([A-Za-z]+)", html):
                name = name.lower()
                out[name] = out.get(name, 0) + 1
            return out
        ''',
        gen='''
        out = ""
        for _ in range(rng.randint(0, 5)):
            name = rng.choice(["p", "div", "B", "span"])
            out += rng.choice([f"<{name}>x</{name.lower()}>", f"<{name}/>", f'<{name} id="1">', "text "])
        return (out,)
        ''',
    ),
    fn(
        "tokenize", 0.35,
        "Split the arithmetic expression `expr` into tokens: multi-digit numbers, the operators "
        "`+ - * /` and parentheses, each as a string; spaces are dropped.",
        examples=[(("12+3*(4-5)",), ["12", "+", "3", "*", "(", "4", "-", "5", ")"]), (("",), [])],
        tests=[(("  7 ",), ["7"]), (("100/25",), ["100", "/", "25"]), (("((1))",), ["(", "(", "1", ")", ")"]),
               (("1 2",), ["1", "2"])],
        ref='''
        def tokenize(expr: str) -> list[str]:
            out = []
            number = ""
            for c in expr:
                if c.isdigit():
                    number += c
                    continue
                if number:
                    out.append(number)
                    number = ""
                if c != " ":
                    out.append(c)
            if number:
                out.append(number)
            return out
        ''',
        gen="return (word(rng, 0, 15, '0123456789 +-*/()'),)",
    ),
    fn(
        "decode_string", 0.55,
        "Decode `s`, where `k[text]` means `text` repeated `k` times (`k` is a positive integer; "
        "brackets nest), e.g. `3[a2[c]]` becomes `accaccacc`. Letters outside brackets stay.",
        examples=[(("3[a]2[bc]",), "aaabcbc"), (("3[a2[c]]",), "accaccacc")],
        tests=[(("",), ""), (("abc",), "abc"), (("2[abc]3[cd]ef",), "abcabccdcdcdef"), (("10[x]",), "xxxxxxxxxx")],
        ref='''
        def decode_string(s: str) -> str:
            stack = [["", 0]]
            number = 0
            for c in s:
                if c.isdigit():
                    number = number * 10 + int(c)
                elif c == "[":
                    stack.append(["", number])
                    number = 0
                elif c == "]":
                    text, k = stack.pop()
                    stack[-1][0] += text * k
                else:
                    stack[-1][0] += c
            return stack[0][0]
        ''',
        gen='''
        def build(depth):
            out = ""
            for _ in range(rng.randint(1, 3)):
                if depth and rng.random() < 0.4:
                    out += f"{rng.randint(1, 4)}[{build(depth - 1)}]"
                else:
                    out += word(rng, 1, 2, "abc")
            return out
        return (build(3),)
        ''',
    ),
    fn(
        "version_compare", 0.3,
        "Compare the dotted version strings `a` and `b` part by part as integers (missing parts "
        "count as 0). Return 1 if `a` is newer, -1 if `b` is newer, else 0.",
        examples=[(("1.2.10", "1.2.9"), 1), (("1.0", "1"), 0)],
        tests=[(("0.1", "1.1"), -1), (("1.0.1", "1"), 1), (("2", "2.0.0"), 0), (("1.10", "1.9"), 1)],
        ref='''
        def version_compare(a: str, b: str) -> int:
            x = [int(p) for p in a.split(".")]
            y = [int(p) for p in b.split(".")]
            n = max(len(x), len(y))
            x += [0] * (n - len(x))
            y += [0] * (n - len(y))
            return (x > y) - (x < y)
        ''',
        gen='''
        def version():
            return ".".join(str(rng.randint(0, 3)) for _ in range(rng.randint(1, 3)))
        return (version(), version())
        ''',
    ),
    fn(
        "day_of_year", 0.3,
        "Return the day of the year (1-based) of the date `s` written as `YYYY-MM-DD`, in the "
        "Gregorian calendar.",
        examples=[(("2024-03-01",), 61), (("2023-12-31",), 365)],
        tests=[(("2024-01-01",), 1), (("2024-12-31",), 366), (("2000-02-29",), 60), (("1900-03-01",), 60)],
        ref='''
        def day_of_year(s: str) -> int:
            y, m, d = (int(p) for p in s.split("-"))
            leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
            days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            return sum(days[:m - 1]) + d
        ''',
        gen='''
        import datetime
        day = datetime.date(1600, 1, 1) + datetime.timedelta(days=rng.randint(0, 200000))
        return (day.isoformat(),)
        ''',
    ),
    fn(
        "extract_numbers", 0.25,
        "Return every integer written in `s`, in order: a maximal run of digits, negative when "
        "the character right before it is `-`.",
        examples=[(("a1b22c-3",), [1, 22, -3]), (("none",), [])],
        tests=[(("",), []), (("--5",), [-5]), (("10 20",), [10, 20]), (("x-y",), [])],
        ref='''
        import re

        def extract_numbers(s: str) -> list[int]:
            return [int(m) for m in re.findall(r"-?\\d+", s)]
        ''',
        gen="return (word(rng, 0, 15, 'ab-0123456789 '),)",
    ),
    fn(
        "max_nesting", 0.2,
        "Return the maximum nesting depth of the parentheses in `s` (the parentheses are "
        "balanced; other characters are ignored).",
        examples=[(("(a(b)c)",), 2), (("",), 0)],
        tests=[(("()()",), 1), (("((()))",), 3), (("x",), 0)],
        ref='''
        def max_nesting(s: str) -> int:
            depth = best = 0
            for c in s:
                if c == "(":
                    depth += 1
                    best = max(best, depth)
                elif c == ")":
                    depth -= 1
            return best
        ''',
        gen='''
        def build(depth):
            out = ""
            for _ in range(rng.randint(0, 2)):
                out += rng.choice(["", "a"]) + "(" + (build(depth - 1) if depth else "") + ")"
            return out
        return (build(4),)
        ''',
    ),
    fn(
        "morse_decode", 0.35,
        "Decode International Morse code (letters A-Z only): letters are separated by one space "
        "and words by ` / `. Return upper-case text with single spaces between words.",
        examples=[(("... --- ...",), "SOS"), ((".... .. / - .... . .-. .",), "HI THERE")],
        tests=[(("",), ""), ((".-",), "A"), (("-- --- .-. ... . / -.-. --- -.. .",), "MORSE CODE")],
        ref='''
        CODE = {".-": "A", "-...": "B", "-.-.": "C", "-..": "D", ".": "E", "..-.": "F", "--.": "G",
                "....": "H", "..": "I", ".---": "J", "-.-": "K", ".-..": "L", "--": "M", "-.": "N",
                "---": "O", ".--.": "P", "--.-": "Q", ".-.": "R", "...": "S", "-": "T", "..-": "U",
                "...-": "V", ".--": "W", "-..-": "X", "-.--": "Y", "--..": "Z"}

        def morse_decode(s: str) -> str:
            if not s:
                return ""
            return " ".join("".join(CODE[c] for c in word.split()) for word in s.split(" / "))
        ''',
        gen='''
        code = [".-", "-...", "-.-.", "-..", ".", "..-.", "--.", "....", "..", ".---", "-.-", ".-..", "--",
                "-.", "---", ".--.", "--.-", ".-.", "...", "-", "..-", "...-", ".--", "-..-", "-.--", "--.."]
        text = [[rng.choice(code) for _ in range(rng.randint(1, 5))] for _ in range(rng.randint(0, 3))]
        return (" / ".join(" ".join(w) for w in text),)
        ''',
    ),
    fn(
        "is_strong_password", 0.2,
        "Return `True` if the password `s` has at least 8 characters and contains an upper-case "
        "letter, a lower-case letter and a digit.",
        examples=[(("Passw0rdX",), True), (("short1A",), False)],
        tests=[(("",), False), (("alllowercase1",), False), (("ALLUPPER123",), False),
               (("NoDigitsHere",), False), (("Ok12345678a",), True)],
        ref='''
        def is_strong_password(s: str) -> bool:
            return (len(s) >= 8 and any(c.isupper() for c in s) and any(c.islower() for c in s)
                    and any(c.isdigit() for c in s))
        ''',
        gen="return (word(rng, 0, 12, 'abcXYZ019!'),)",
    ),
    fn(
        "format_phone", 0.1,
        "Format the 10-digit string `digits` as a phone number `(123) 456-7890`.",
        examples=[(("1234567890",), "(123) 456-7890"), (("5550001111",), "(555) 000-1111")],
        tests=[(("0000000000",), "(000) 000-0000"), (("9876543210",), "(987) 654-3210")],
        ref='''
        def format_phone(digits: str) -> str:
            return f"({digits[:3]}) {digits[3:6]}-{digits[6:]}"
        ''',
        gen="return (word(rng, 10, 10, DIGITS),)",
    ),
    fn(
        "expand_ranges", 0.35,
        "Expand `s`, a comma-separated list of integers and ranges `a-b` (non-negative, `a <= b`, "
        "inclusive), into the list of integers in the order written.",
        examples=[(("1-3,5",), [1, 2, 3, 5]), (("",), [])],
        tests=[(("4",), [4]), (("10-12,1-2",), [10, 11, 12, 1, 2]), (("0-0",), [0])],
        ref='''
        def expand_ranges(s: str) -> list[int]:
            out = []
            for part in s.split(","):
                if not part:
                    continue
                lo, _, hi = part.partition("-")
                out.extend(range(int(lo), int(hi or lo) + 1))
            return out
        ''',
        gen='''
        parts = []
        for _ in range(rng.randint(0, 4)):
            a = rng.randint(0, 20)
            parts.append(str(a) if rng.random() < 0.4 else f"{a}-{a + rng.randint(0, 4)}")
        return (",".join(parts),)
        ''',
    ),
    fn(
        "compress_ranges", 0.4,
        "`xs` is sorted ascending with distinct integers. Describe it compactly: runs of two or "
        "more consecutive integers become `a-b`, single numbers stay, all joined by commas.",
        examples=[(([1, 2, 3, 5, 7, 8],), "1-3,5,7-8"), (([],), "")],
        tests=[(([4],), "4"), (([1, 3],), "1,3"), (([-2, -1, 0, 2],), "-2-0,2")],
        ref='''
        def compress_ranges(xs: list[int]) -> str:
            parts = []
            i = 0
            while i < len(xs):
                j = i
                while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
                    j += 1
                parts.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
                i = j + 1
            return ",".join(parts)
        ''',
        gen="return (sorted(rng.sample(range(-5, 25), rng.randint(0, 12))),)",
    ),
]
