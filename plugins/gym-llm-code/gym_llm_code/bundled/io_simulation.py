"""Stdin/stdout tasks that simulate a process or transform text."""

from ..problems import prog

TOPIC = "stdio-simulation"

PROBLEMS = [
    prog(
        "queue_commands", 0.3,
        "Simulate a queue of integers.",
        input="q (1 <= q <= 10^5), then q commands: `push x`, `pop` (remove the front), `front` "
              "or `size`.",
        output="For `front`, the front value (or `EMPTY`); for `size`, the number of elements; "
               "`pop` on an empty queue does nothing and prints nothing. One output per line.",
        examples=[("5\npush 1\npush 2\nfront\npop\nfront\n", "1\n2\n"), ("2\nfront\nsize\n", "EMPTY\n0\n")],
        tests=[("4\npop\npush 7\nsize\nfront\n", "1\n7\n"), ("3\npush 1\npop\nfront\n", "EMPTY\n")],
        ref='''
        import sys
        from collections import deque
        lines = sys.stdin.read().split("\\n")
        queue = deque()
        out = []
        for line in lines[1:1 + int(lines[0])]:
            parts = line.split()
            if parts[0] == "push":
                queue.append(parts[1])
            elif parts[0] == "pop":
                if queue:
                    queue.popleft()
            elif parts[0] == "front":
                out.append(queue[0] if queue else "EMPTY")
            else:
                out.append(str(len(queue)))
        print("\\n".join(out))
        ''',
        gen='''
        cmds = [rng.choice([f"push {rng.randint(-9, 9)}", "pop", "front", "size"]) for _ in range(rng.randint(1, 12))]
        return f"{len(cmds)}\\n" + "\\n".join(cmds) + "\\n"
        ''',
    ),
    prog(
        "undo_editor", 0.45,
        "Simulate a text editor with undo.",
        input="q (1 <= q <= 10^5), then q commands: `type w` appends the word w (lower-case "
              "letters) to the text, `delete k` removes the last k characters (all if fewer), "
              "`undo` reverts the latest `type` or `delete` not yet undone (nothing if none).",
        output="The final text, or `EMPTY` if it is empty.",
        examples=[("4\ntype abc\ntype de\nundo\ndelete 1\n", "ab\n"), ("2\ntype x\nundo\n", "EMPTY\n")],
        tests=[("3\nundo\ntype hi\ndelete 5\n", "EMPTY\n"), ("5\ntype ab\ndelete 1\nundo\nundo\ntype z\n", "z\n")],
        ref='''
        import sys
        lines = sys.stdin.read().split("\\n")
        text = ""
        history = []
        for line in lines[1:1 + int(lines[0])]:
            parts = line.split()
            if parts[0] == "type":
                history.append(text)
                text += parts[1]
            elif parts[0] == "delete":
                history.append(text)
                text = text[:max(0, len(text) - int(parts[1]))]
            elif history:
                text = history.pop()
        print(text or "EMPTY")
        ''',
        gen='''
        cmds = [rng.choice([f"type {word(rng, 1, 3, 'abc')}", f"delete {rng.randint(1, 3)}", "undo"]) for _ in range(rng.randint(1, 10))]
        return f"{len(cmds)}\\n" + "\\n".join(cmds) + "\\n"
        ''',
    ),
    prog(
        "robot_walls", 0.35,
        "Move a robot on a grid with walls.",
        input="r and c, then r lines of c characters (`.` free, `#` wall, `R` the robot's start), "
              "then a line of moves `U`, `D`, `L`, `R`. A move into a wall or off the grid is "
              "ignored.",
        output="The robot's final row and column, 1-based.",
        examples=[("2 3\nR..\n.#.\nRRDL\n", "2 3\n"), ("1 1\nR\nUDLR\n", "1 1\n")],
        tests=[("3 3\n...\n.R.\n...\nUULL\n", "1 1\n"), ("2 2\nR#\n..\nRDR\n", "2 2\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        r, c = int(data[0]), int(data[1])
        grid = data[2:2 + r]
        moves = data[2 + r] if len(data) > 2 + r else ""
        for i in range(r):
            for j in range(c):
                if grid[i][j] == "R":
                    y, x = i, j
        for m in moves:
            dy, dx = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}[m]
            ny, nx = y + dy, x + dx
            if 0 <= ny < r and 0 <= nx < c and grid[ny][nx] != "#":
                y, x = ny, nx
        print(y + 1, x + 1)
        ''',
        gen='''
        r, c = rng.randint(1, 6), rng.randint(1, 6)
        cells = [["#" if rng.random() < 0.25 else "." for _ in range(c)] for _ in range(r)]
        cells[rng.randrange(r)][rng.randrange(c)] = "R"
        return f"{r} {c}\\n" + "\\n".join("".join(row) for row in cells) + "\\n" + word(rng, 1, 15, "UDLR") + "\\n"
        ''',
    ),
    prog(
        "caesar_line", 0.15,
        "Encrypt a line with a Caesar shift: every letter moves k places forward in the alphabet "
        "(wrapping around, keeping case); other characters stay.",
        input="k (0 <= k <= 1000) on the first line, the text on the second.",
        output="The encrypted text.",
        examples=[("3\nHello, World!\n", "Khoor, Zruog!\n"), ("1\nxyz\n", "yza\n")],
        tests=[("26\nabc\n", "abc\n"), ("25\nB a\n", "A z\n")],
        ref='''
        import sys
        k_line, text = sys.stdin.read().split("\\n")[:2]
        k = int(k_line)
        out = []
        for ch in text:
            if "a" <= ch <= "z":
                out.append(chr((ord(ch) - 97 + k) % 26 + 97))
            elif "A" <= ch <= "Z":
                out.append(chr((ord(ch) - 65 + k) % 26 + 65))
            else:
                out.append(ch)
        print("".join(out))
        ''',
        gen="return f'{rng.randint(0, 1000)}\\n' + word(rng, 1, 20, LOWER + UPPER + ' ,.!') + '\\n'",
    ),
    prog(
        "rle_line", 0.2,
        "Run-length encode a string: each maximal run of one character becomes the character "
        "followed by the run's length.",
        input="One non-empty line of lower-case letters.",
        output="The encoded string.",
        examples=[("aaabcc\n", "a3b1c2\n"), ("z\n", "z1\n")],
        tests=[("abab\n", "a1b1a1b1\n"), ("qqqqqqqqqqqq\n", "q12\n")],
        ref='''
        s = input().strip()
        out = []
        i = 0
        while i < len(s):
            j = i
            while j < len(s) and s[j] == s[i]:
                j += 1
            out.append(f"{s[i]}{j - i}")
            i = j
        print("".join(out))
        ''',
        gen="return ''.join(rng.choice('abc') * rng.randint(1, 12) for _ in range(rng.randint(1, 6))) + '\\n'",
    ),
    prog(
        "most_frequent_word", 0.25,
        "Find the most frequent word of a text (ties: the alphabetically smallest).",
        input="Any number of lines of lower-case words separated by spaces (at least one word).",
        output="The most frequent word.",
        examples=[("b a b\na c\n", "a\n"), ("x y\n", "x\n")],
        tests=[("z z y y\n", "y\n"), ("one\n", "one\n")],
        ref='''
        import sys
        counts = {}
        for w in sys.stdin.read().split():
            counts[w] = counts.get(w, 0) + 1
        print(min(counts, key=lambda w: (-counts[w], w)))
        ''',
        gen="return ' '.join(rng.choice(['ant', 'bee', 'cat', 'dog']) for _ in range(rng.randint(1, 12))) + '\\n'",
    ),
    prog(
        "life_steps", 0.5,
        "Run Conway's Game of Life for k steps on a bounded grid (cells outside are dead).",
        input="r, c and k (1 <= r, c <= 50, 0 <= k <= 100), then r lines of `.` (dead) and `#` "
              "(alive).",
        output="The grid after k steps, in the same format.",
        examples=[("3 3 1\n.#.\n.#.\n.#.\n", "...\n###\n...\n"), ("1 1 5\n#\n", ".\n")],
        tests=[("2 2 3\n##\n##\n", "##\n##\n"), ("3 3 2\n.#.\n.#.\n.#.\n", ".#.\n.#.\n.#.\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        r, c, k = int(data[0]), int(data[1]), int(data[2])
        grid = [list(row) for row in data[3:3 + r]]
        for _ in range(k):
            new = []
            for i in range(r):
                row = []
                for j in range(c):
                    n = sum(1 for di in (-1, 0, 1) for dj in (-1, 0, 1)
                            if (di or dj) and 0 <= i + di < r and 0 <= j + dj < c and grid[i + di][j + dj] == "#")
                    row.append("#" if n == 3 or (n == 2 and grid[i][j] == "#") else ".")
                new.append(row)
            grid = new
        print("\\n".join("".join(row) for row in grid))
        ''',
        gen='''
        r, c = rng.randint(1, 8), rng.randint(1, 8)
        rows = ["".join(rng.choice(".#") for _ in range(c)) for _ in range(r)]
        return f"{r} {c} {rng.randint(0, 6)}\\n" + "\\n".join(rows) + "\\n"
        ''',
    ),
    prog(
        "josephus_order", 0.4,
        "n people stand in a circle numbered 1..n; starting from person 1, every k-th person "
        "leaves (counting continues from the next person). Print the order in which they leave.",
        input="n and k (1 <= n, k <= 5000).",
        output="The n numbers in leaving order, separated by spaces.",
        examples=[("7 3\n", "3 6 2 7 5 1 4\n"), ("1 1\n", "1\n")],
        tests=[("5 2\n", "2 4 1 5 3\n"), ("3 1\n", "1 2 3\n"), ("4 5\n", "1 3 4 2\n")],
        ref='''
        n, k = map(int, input().split())
        people = list(range(1, n + 1))
        out = []
        i = 0
        while people:
            i = (i + k - 1) % len(people)
            out.append(people.pop(i))
        print(" ".join(map(str, out)))
        ''',
        gen='return f"{rng.randint(1, 60)} {rng.randint(1, 10)}\\n"',
    ),
    prog(
        "weekday", 0.45,
        "Print the day of the week of a date in the Gregorian calendar.",
        input="One date `YYYY-MM-DD` (1600 <= YYYY <= 9999).",
        output="The English name of the weekday, e.g. `Monday`.",
        examples=[("2024-01-01\n", "Monday\n"), ("2000-02-29\n", "Tuesday\n")],
        tests=[("1969-07-20\n", "Sunday\n"), ("2023-12-25\n", "Monday\n"), ("1600-03-01\n", "Wednesday\n")],
        ref='''
        import datetime
        y, m, d = map(int, input().strip().split("-"))
        print(datetime.date(y, m, d).strftime("%A"))
        ''',
        gen='''
        import datetime
        day = datetime.date(1600, 1, 1) + datetime.timedelta(days=rng.randint(0, 3000000))
        return day.isoformat() + "\\n"
        ''',
    ),
    prog(
        "roman_lines", 0.3,
        "Convert Roman numerals to integers.",
        input="t (1 <= t <= 1000), then t Roman numerals (values 1 to 3999), one per line.",
        output="Their values, one per line.",
        examples=[("2\nXIV\nMCMXCIV\n", "14\n1994\n"), ("1\nI\n", "1\n")],
        tests=[("3\nIV\nIX\nMMMCMXCIX\n", "4\n9\n3999\n"), ("1\nLVIII\n", "58\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
        for s in data[1:1 + int(data[0])]:
            total = 0
            for i, ch in enumerate(s):
                v = values[ch]
                total += -v if i + 1 < len(s) and values[s[i + 1]] > v else v
            print(total)
        ''',
        gen='''
        table = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
                 (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
        lines = []
        for _ in range(rng.randint(1, 6)):
            n = rng.randint(1, 3999)
            s = ""
            for value, symbol in table:
                while n >= value:
                    s += symbol
                    n -= value
            lines.append(s)
        return f"{len(lines)}\\n" + "\\n".join(lines) + "\\n"
        ''',
    ),
    prog(
        "matrix_product", 0.3,
        "Multiply two integer matrices.",
        input="n, m, p (1 <= n, m, p <= 100); then n lines of m integers (matrix A); then m lines "
              "of p integers (matrix B).",
        output="The product A x B: n lines of p integers.",
        examples=[("2 2 2\n1 2\n3 4\n5 6\n7 8\n", "19 22\n43 50\n"), ("1 3 1\n1 2 3\n1\n2\n3\n", "14\n")],
        tests=[("1 1 1\n-2\n3\n", "-6\n"), ("2 1 2\n1\n2\n3 4\n", "3 4\n6 8\n")],
        ref='''
        import sys
        data = [int(x) for x in sys.stdin.read().split()]
        n, m, p = data[:3]
        a = [data[3 + i * m:3 + (i + 1) * m] for i in range(n)]
        off = 3 + n * m
        b = [data[off + i * p:off + (i + 1) * p] for i in range(m)]
        for row in a:
            print(" ".join(str(sum(x * y for x, y in zip(row, col))) for col in zip(*b)))
        ''',
        gen='''
        n, m, p = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 4)
        a = "\\n".join(" ".join(map(str, ints(rng, m, -9, 9))) for _ in range(n))
        b = "\\n".join(" ".join(map(str, ints(rng, p, -9, 9))) for _ in range(m))
        return f"{n} {m} {p}\\n{a}\\n{b}\\n"
        ''',
    ),
    prog(
        "spiral_print", 0.45,
        "Print the elements of a matrix in clockwise spiral order from the top-left corner.",
        input="r and c (1 <= r, c <= 100), then r lines of c integers.",
        output="The r*c elements in spiral order, separated by spaces.",
        examples=[("3 3\n1 2 3\n4 5 6\n7 8 9\n", "1 2 3 6 9 8 7 4 5\n"), ("1 1\n5\n", "5\n")],
        tests=[("3 1\n1\n2\n3\n", "1 2 3\n"), ("2 3\n1 2 3\n4 5 6\n", "1 2 3 6 5 4\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        r, c = int(data[0]), int(data[1])
        rows = [data[2 + i * c:2 + (i + 1) * c] for i in range(r)]
        out = []
        while rows:
            out += rows.pop(0)
            rows = [list(x) for x in zip(*rows)][::-1]
        print(" ".join(out))
        ''',
        gen='''
        r, c = rng.randint(1, 6), rng.randint(1, 6)
        return f"{r} {c}\\n" + "\\n".join(" ".join(map(str, ints(rng, c, 0, 99))) for _ in range(r)) + "\\n"
        ''',
    ),
    prog(
        "collatz_champion", 0.35,
        "Find the number in [a, b] whose Collatz sequence takes the most steps to reach 1 (a step "
        "maps even n to n/2 and odd n to 3n+1); on a tie, the smallest such number.",
        input="a and b (1 <= a <= b <= 10^5).",
        output="The number and its step count.",
        examples=[("1 10\n", "9 19\n"), ("1 1\n", "1 0\n")],
        tests=[("5 7\n", "7 16\n"), ("27 27\n", "27 111\n")],
        ref='''
        a, b = map(int, input().split())
        best = (-1, 0)
        for n in range(a, b + 1):
            steps, m = 0, n
            while m != 1:
                m = m // 2 if m % 2 == 0 else 3 * m + 1
                steps += 1
            if steps > best[0]:
                best = (steps, n)
        print(best[1], best[0])
        ''',
        gen='''
        a = rng.randint(1, 3000)
        return f"{a} {a + rng.randint(0, 300)}\\n"
        ''',
    ),
    prog(
        "fair_split", 0.55,
        "Split items into two groups so that their total weights are as close as possible.",
        input="n (1 <= n <= 20), then n positive integer weights (<= 10^6).",
        output="The smallest possible difference between the two groups' totals.",
        examples=[("5\n3 1 4 2 2\n", "0\n"), ("1\n7\n", "7\n")],
        tests=[("2\n1 10\n", "9\n"), ("4\n1 2 3 9\n", "3\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        ws = [int(x) for x in data[1:1 + int(data[0])]]
        total = sum(ws)
        sums = {0}
        for w in ws:
            sums |= {s + w for s in sums}
        print(min(abs(total - 2 * s) for s in sums))
        ''',
        gen='''
        ws = ints(rng, rng.randint(1, 12), 1, 100)
        return f"{len(ws)}\\n{' '.join(map(str, ws))}\\n"
        ''',
    ),
    prog(
        "minesweeper_counts", 0.35,
        "Fill in a Minesweeper board: replace each `.` with the number of mines (`*`) among its "
        "eight neighbours.",
        input="r and c (1 <= r, c <= 100), then r lines of `.` and `*`.",
        output="The board with every `.` replaced by a digit, mines unchanged.",
        examples=[("2 3\n*..\n...\n", "*10\n110\n"), ("1 1\n*\n", "*\n")],
        tests=[("3 3\n...\n.*.\n...\n", "111\n1*1\n111\n"), ("1 3\n*.*\n", "*2*\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        r, c = int(data[0]), int(data[1])
        grid = data[2:2 + r]
        for i in range(r):
            row = ""
            for j in range(c):
                if grid[i][j] == "*":
                    row += "*"
                else:
                    row += str(sum(1 for di in (-1, 0, 1) for dj in (-1, 0, 1)
                                   if 0 <= i + di < r and 0 <= j + dj < c and grid[i + di][j + dj] == "*"))
            print(row)
        ''',
        gen='''
        r, c = rng.randint(1, 6), rng.randint(1, 6)
        return f"{r} {c}\\n" + "\\n".join("".join("*" if rng.random() < 0.25 else "." for _ in range(c)) for _ in range(r)) + "\\n"
        ''',
    ),
]
