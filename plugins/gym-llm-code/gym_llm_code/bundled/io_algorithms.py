"""Competitive-programming style stdin/stdout tasks: arrays, search, DP, graphs."""

from ..problems import prog

TOPIC = "stdio-algorithms"

PROBLEMS = [
    prog(
        "range_sum_queries", 0.3,
        "Answer range-sum queries over an array.",
        input="n, then n integers a_1..a_n, then q, then q lines `l r` (1 <= l <= r <= n). "
              "n, q <= 10^5.",
        output="For each query, the sum a_l + ... + a_r on its own line.",
        examples=[("5\n1 2 3 4 5\n2\n1 3\n2 5\n", "6\n14\n"), ("1\n-7\n1\n1 1\n", "-7\n")],
        tests=[("3\n0 0 0\n1\n1 3\n", "0\n"), ("4\n5 -5 5 -5\n3\n1 4\n2 2\n3 4\n", "0\n-5\n0\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        n = int(data[0])
        prefix = [0]
        for x in data[1:1 + n]:
            prefix.append(prefix[-1] + int(x))
        q = int(data[1 + n])
        out = []
        pos = 2 + n
        for _ in range(q):
            l, r = int(data[pos]), int(data[pos + 1])
            pos += 2
            out.append(prefix[r] - prefix[l - 1])
        print("\\n".join(map(str, out)))
        ''',
        gen='''
        n = rng.randint(1, 30)
        xs = ints(rng, n, -50, 50)
        qs = []
        for _ in range(rng.randint(1, 10)):
            l = rng.randint(1, n)
            qs.append(f"{l} {rng.randint(l, n)}")
        return f"{n}\\n{' '.join(map(str, xs))}\\n{len(qs)}\\n" + "\\n".join(qs) + "\\n"
        ''',
    ),
    prog(
        "distinct_values", 0.1,
        "Count the distinct values among n integers.",
        input="n (1 <= n <= 10^5), then n integers.",
        output="The number of distinct values.",
        examples=[("5\n1 2 1 3 2\n", "3\n"), ("1\n9\n", "1\n")],
        tests=[("4\n7 7 7 7\n", "1\n"), ("3\n-1 0 1\n", "3\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        print(len(set(data[1:1 + int(data[0])])))
        ''',
        gen='''
        xs = ints(rng, rng.randint(1, 40), 0, 15)
        return f"{len(xs)}\\n{' '.join(map(str, xs))}\\n"
        ''',
    ),
    prog(
        "balanced_lines", 0.3,
        "For each line, decide whether its brackets `()[]{}` are balanced.",
        input="t (1 <= t <= 100), then t lines, each a non-empty string of the characters `()[]{}`.",
        output="For each line, `YES` or `NO`.",
        examples=[("3\n()\n([)]\n{[]}\n", "YES\nNO\nYES\n"), ("1\n(\n", "NO\n")],
        tests=[("2\n)(\n(())[]\n", "NO\nYES\n"), ("1\n{{{}}}\n", "YES\n")],
        ref='''
        import sys
        lines = sys.stdin.read().split()
        pairs = {")": "(", "]": "[", "}": "{"}
        for s in lines[1:1 + int(lines[0])]:
            stack = []
            ok = True
            for c in s:
                if c in pairs:
                    if not stack or stack.pop() != pairs[c]:
                        ok = False
                        break
                else:
                    stack.append(c)
            print("YES" if ok and not stack else "NO")
        ''',
        gen='''
        lines = []
        for _ in range(rng.randint(1, 6)):
            s = ""
            for _ in range(rng.randint(1, 4)):
                o, c = rng.choice(["()", "[]", "{}"])
                s = rng.choice([o + s + c, s + o + c])
            if rng.random() < 0.4:
                i = rng.randrange(len(s))
                s = s[:i] + rng.choice("()[]{}") + s[i + 1:]
            lines.append(s)
        return f"{len(lines)}\\n" + "\\n".join(lines) + "\\n"
        ''',
    ),
    prog(
        "sorted_search", 0.3,
        "Find values in a sorted array.",
        input="n, then n distinct integers in increasing order, then q, then q integers to find "
              "(n, q <= 10^5).",
        output="For each query, the 1-based position of the value in the array, or -1.",
        examples=[("4\n1 3 5 7\n3\n5\n1\n4\n", "3\n1\n-1\n"), ("1\n10\n1\n10\n", "1\n")],
        tests=[("3\n-5 0 5\n2\n5\n6\n", "3\n-1\n"), ("2\n1 2\n1\n0\n", "-1\n")],
        ref='''
        import sys
        from bisect import bisect_left
        data = sys.stdin.read().split()
        n = int(data[0])
        xs = [int(x) for x in data[1:1 + n]]
        out = []
        for v in data[2 + n:]:
            v = int(v)
            i = bisect_left(xs, v)
            out.append(i + 1 if i < n and xs[i] == v else -1)
        print("\\n".join(map(str, out)))
        ''',
        gen='''
        xs = sorted(rng.sample(range(-100, 100), rng.randint(1, 20)))
        qs = [rng.choice(xs) if rng.random() < 0.6 else rng.randint(-100, 100) for _ in range(rng.randint(1, 8))]
        return f"{len(xs)}\\n{' '.join(map(str, xs))}\\n{len(qs)}\\n" + "\\n".join(map(str, qs)) + "\\n"
        ''',
    ),
    prog(
        "primes_up_to", 0.25,
        "Print all primes up to n.",
        input="One integer n (1 <= n <= 10^6).",
        output="The primes <= n in increasing order separated by spaces (an empty line if none).",
        examples=[("10\n", "2 3 5 7\n"), ("1\n", "\n")],
        tests=[("2\n", "2\n"), ("30\n", "2 3 5 7 11 13 17 19 23 29\n")],
        ref='''
        n = int(input())
        sieve = bytearray([1]) * (n + 1)
        sieve[0] = sieve[1] = 0
        for k in range(2, int(n ** 0.5) + 1):
            if sieve[k]:
                sieve[k * k::k] = bytearray(len(range(k * k, n + 1, k)))
        print(" ".join(str(k) for k in range(2, n + 1) if sieve[k]))
        ''',
        gen="return f'{rng.choice([rng.randint(1, 100), rng.randint(1, 20000)])}\\n'",
    ),
    prog(
        "row_col_sums", 0.2,
        "Print the row sums and the column sums of a matrix.",
        input="r and c (1 <= r, c <= 100), then r lines of c integers.",
        output="Line 1: the r row sums; line 2: the c column sums (space-separated).",
        examples=[("2 3\n1 2 3\n4 5 6\n", "6 15\n5 7 9\n"), ("1 1\n-3\n", "-3\n-3\n")],
        tests=[("3 1\n1\n2\n3\n", "1 2 3\n6\n"), ("2 2\n0 0\n0 1\n", "0 1\n0 1\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        r, c = int(data[0]), int(data[1])
        m = [[int(data[2 + i * c + j]) for j in range(c)] for i in range(r)]
        print(" ".join(str(sum(row)) for row in m))
        print(" ".join(str(sum(col)) for col in zip(*m)))
        ''',
        gen='''
        r, c = rng.randint(1, 6), rng.randint(1, 6)
        rows = [" ".join(map(str, ints(rng, c, -9, 9))) for _ in range(r)]
        return f"{r} {c}\\n" + "\\n".join(rows) + "\\n"
        ''',
    ),
    prog(
        "longest_run", 0.15,
        "Find the length of the longest block of equal consecutive characters in a string.",
        input="One non-empty string of lower-case letters (length <= 10^6).",
        output="The length of the longest run.",
        examples=[("aabbbc\n", "3\n"), ("abc\n", "1\n")],
        tests=[("zzzzz\n", "5\n"), ("abbbbaa\n", "4\n")],
        ref='''
        s = input().strip()
        best = run = 1
        for i in range(1, len(s)):
            run = run + 1 if s[i] == s[i - 1] else 1
            best = max(best, run)
        print(best)
        ''',
        gen="return ''.join(rng.choice('ab') * rng.randint(1, 6) for _ in range(rng.randint(1, 8))) + '\\n'",
    ),
    prog(
        "anagram_check", 0.1,
        "Decide whether two words are anagrams of each other.",
        input="Two words of lower-case letters on one line, separated by a space.",
        output="`YES` or `NO`.",
        examples=[("listen silent\n", "YES\n"), ("abc abd\n", "NO\n")],
        tests=[("a a\n", "YES\n"), ("ab abb\n", "NO\n"), ("dusty study\n", "YES\n")],
        ref='''
        a, b = input().split()
        print("YES" if sorted(a) == sorted(b) else "NO")
        ''',
        gen='''
        a = word(rng, 1, 8, "abcd")
        b = list(a)
        rng.shuffle(b)
        b = "".join(b)
        if rng.random() < 0.4:
            b = b[:-1] + rng.choice("abcd")
        return f"{a} {b}\\n"
        ''',
    ),
    prog(
        "pair_with_sum", 0.25,
        "Decide whether two different positions of an array hold values that add up to a target.",
        input="n and target, then n integers (n <= 10^5, |values| <= 10^9).",
        output="`YES` or `NO`.",
        examples=[("4 9\n2 7 11 15\n", "YES\n"), ("3 10\n1 2 3\n", "NO\n")],
        tests=[("1 2\n1\n", "NO\n"), ("2 6\n3 3\n", "YES\n"), ("3 0\n0 1 2\n", "NO\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        n, target = int(data[0]), int(data[1])
        seen = set()
        ok = False
        for x in data[2:2 + n]:
            x = int(x)
            if target - x in seen:
                ok = True
                break
            seen.add(x)
        print("YES" if ok else "NO")
        ''',
        gen='''
        xs = ints(rng, rng.randint(1, 12), -20, 20)
        return f"{len(xs)} {rng.randint(-30, 30)}\\n{' '.join(map(str, xs))}\\n"
        ''',
    ),
    prog(
        "fewest_coins", 0.45,
        "Make an amount with as few coins as possible.",
        input="amount and k (0 <= amount <= 10^4, 1 <= k <= 20), then k distinct coin values "
              "(1..10^4); each coin can be used any number of times.",
        output="The fewest coins adding up to the amount, or -1 if impossible.",
        examples=[("11 3\n1 2 5\n", "3\n"), ("3 1\n2\n", "-1\n")],
        tests=[("0 1\n7\n", "0\n"), ("6 3\n1 3 4\n", "2\n"), ("7 2\n2 3\n", "3\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        amount, k = int(data[0]), int(data[1])
        coins = [int(x) for x in data[2:2 + k]]
        inf = amount + 1
        best = [0] + [inf] * amount
        for a in range(1, amount + 1):
            for c in coins:
                if c <= a and best[a - c] + 1 < best[a]:
                    best[a] = best[a - c] + 1
        print(best[amount] if best[amount] <= amount else -1)
        ''',
        gen='''
        coins = rng.sample(range(2, 30), rng.randint(1, 4))
        return f"{rng.randint(0, 300)} {len(coins)}\\n{' '.join(map(str, coins))}\\n"
        ''',
    ),
    prog(
        "lis_length", 0.5,
        "Find the length of the longest strictly increasing subsequence.",
        input="n (1 <= n <= 10^5), then n integers.",
        output="The length of the longest strictly increasing subsequence.",
        examples=[("8\n10 9 2 5 3 7 101 18\n", "4\n"), ("3\n3 2 1\n", "1\n")],
        tests=[("5\n1 2 3 4 5\n", "5\n"), ("6\n2 2 2 3 3 1\n", "2\n"), ("1\n0\n", "1\n")],
        ref='''
        import sys
        from bisect import bisect_left
        data = sys.stdin.read().split()
        tails = []
        for x in data[1:1 + int(data[0])]:
            x = int(x)
            i = bisect_left(tails, x)
            if i == len(tails):
                tails.append(x)
            else:
                tails[i] = x
        print(len(tails))
        ''',
        gen='''
        xs = ints(rng, rng.randint(1, 200), 0, 100)
        return f"{len(xs)}\\n{' '.join(map(str, xs))}\\n"
        ''',
    ),
    prog(
        "grid_paths", 0.5,
        "Count the paths from the top-left to the bottom-right cell of a grid, moving right or "
        "down and never entering a blocked cell.",
        input="r and c (1 <= r, c <= 1000), then r lines of c characters: `.` free, `#` blocked.",
        output="The number of paths modulo 1000000007 (0 if the start or the end is blocked).",
        examples=[("3 3\n...\n.#.\n...\n", "2\n"), ("1 1\n.\n", "1\n")],
        tests=[("2 2\n.#\n#.\n", "0\n"), ("1 1\n#\n", "0\n"), ("3 4\n....\n....\n....\n", "10\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        r, c = int(data[0]), int(data[1])
        grid = data[2:2 + r]
        mod = 10**9 + 7
        row = [0] * c
        for i in range(r):
            for j in range(c):
                if grid[i][j] == "#":
                    row[j] = 0
                elif i == 0 and j == 0:
                    row[j] = 1
                else:
                    row[j] = (row[j] + (row[j - 1] if j else 0)) % mod
        print(row[-1])
        ''',
        gen='''
        r, c = rng.randint(1, 15), rng.randint(1, 15)
        rows = ["".join("#" if rng.random() < 0.15 else "." for _ in range(c)) for _ in range(r)]
        return f"{r} {c}\\n" + "\\n".join(rows) + "\\n"
        ''',
    ),
    prog(
        "maze_shortest_path", 0.55,
        "Find the fewest moves from S to E in a maze, moving up, down, left or right between "
        "free cells.",
        input="r and c (1 <= r, c <= 1000), then r lines of c characters: `.` free, `#` wall, "
              "`S` start, `E` end (exactly one of each).",
        output="The fewest moves, or -1 if E cannot be reached.",
        examples=[("3 3\nS.#\n.#.\n..E\n", "4\n"), ("1 3\nS#E\n", "-1\n")],
        tests=[("1 2\nSE\n", "1\n"), ("2 3\nS#E\n...\n", "4\n")],
        ref='''
        import sys
        from collections import deque
        data = sys.stdin.read().split()
        r, c = int(data[0]), int(data[1])
        grid = data[2:2 + r]
        for i in range(r):
            for j in range(c):
                if grid[i][j] == "S":
                    start = (i, j)
        dist = {start: 0}
        queue = deque([start])
        answer = -1
        while queue:
            i, j = queue.popleft()
            if grid[i][j] == "E":
                answer = dist[(i, j)]
                break
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                ni, nj = i + di, j + dj
                if 0 <= ni < r and 0 <= nj < c and grid[ni][nj] != "#" and (ni, nj) not in dist:
                    dist[(ni, nj)] = dist[(i, j)] + 1
                    queue.append((ni, nj))
        print(answer)
        ''',
        gen='''
        r, c = rng.randint(1, 10), rng.randint(2, 10)
        cells = [["#" if rng.random() < 0.3 else "." for _ in range(c)] for _ in range(r)]
        spots = rng.sample([(i, j) for i in range(r) for j in range(c)], 2)
        cells[spots[0][0]][spots[0][1]] = "S"
        cells[spots[1][0]][spots[1][1]] = "E"
        return f"{r} {c}\\n" + "\\n".join("".join(row) for row in cells) + "\\n"
        ''',
    ),
    prog(
        "count_components", 0.5,
        "Count the connected components of an undirected graph.",
        input="n and m (1 <= n <= 10^5, 0 <= m <= 2*10^5), then m lines `u v` (1-based vertices).",
        output="The number of connected components.",
        examples=[("5 3\n1 2\n2 3\n4 5\n", "2\n"), ("3 0\n", "3\n")],
        tests=[("1 0\n", "1\n"), ("4 4\n1 2\n2 3\n3 4\n4 1\n", "1\n"), ("4 1\n2 2\n", "4\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        n, m = int(data[0]), int(data[1])
        parent = list(range(n + 1))
        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x
        components = n
        for k in range(m):
            a, b = find(int(data[2 + 2 * k])), find(int(data[3 + 2 * k]))
            if a != b:
                parent[a] = b
                components -= 1
        print(components)
        ''',
        gen='''
        n = rng.randint(1, 15)
        edges = [f"{rng.randint(1, n)} {rng.randint(1, n)}" for _ in range(rng.randint(0, 12))]
        return f"{n} {len(edges)}\\n" + "".join(e + "\\n" for e in edges)
        ''',
    ),
    prog(
        "topological_order", 0.65,
        "Order the vertices of a directed graph so that every edge goes forward.",
        input="n and m (1 <= n <= 10^5, 0 <= m <= 2*10^5), then m lines `u v` for an edge u -> v.",
        output="The lexicographically smallest valid order (vertex numbers separated by spaces), or "
               "`IMPOSSIBLE` if the graph has a cycle.",
        examples=[("4 3\n1 2\n3 2\n2 4\n", "1 3 2 4\n"), ("2 2\n1 2\n2 1\n", "IMPOSSIBLE\n")],
        tests=[("3 0\n", "1 2 3\n"), ("3 2\n3 1\n2 1\n", "2 3 1\n"), ("1 1\n1 1\n", "IMPOSSIBLE\n")],
        ref='''
        import sys
        import heapq
        data = sys.stdin.read().split()
        n, m = int(data[0]), int(data[1])
        out_edges = [[] for _ in range(n + 1)]
        indegree = [0] * (n + 1)
        for k in range(m):
            u, v = int(data[2 + 2 * k]), int(data[3 + 2 * k])
            out_edges[u].append(v)
            indegree[v] += 1
        heap = [v for v in range(1, n + 1) if indegree[v] == 0]
        heapq.heapify(heap)
        order = []
        while heap:
            u = heapq.heappop(heap)
            order.append(u)
            for v in out_edges[u]:
                indegree[v] -= 1
                if indegree[v] == 0:
                    heapq.heappush(heap, v)
        print(" ".join(map(str, order)) if len(order) == n else "IMPOSSIBLE")
        ''',
        gen='''
        n = rng.randint(1, 10)
        perm = list(range(1, n + 1))
        rng.shuffle(perm)
        edges = []
        for _ in range(rng.randint(0, 12)):
            i, j = sorted(rng.sample(range(n), 2)) if n > 1 else (0, 0)
            edges.append((perm[i], perm[j]) if rng.random() < 0.9 else (perm[j], perm[i]))
        return f"{n} {len(edges)}\\n" + "".join(f"{u} {v}\\n" for u, v in edges)
        ''',
    ),
    prog(
        "shortest_route", 0.65,
        "Find the length of the shortest route from vertex 1 to vertex n in a weighted undirected "
        "graph.",
        input="n and m (2 <= n <= 10^5, 0 <= m <= 2*10^5), then m lines `u v w` (1 <= w <= 10^9).",
        output="The length of the shortest route, or -1 if n cannot be reached from 1.",
        examples=[("4 4\n1 2 1\n2 4 5\n1 3 2\n3 4 1\n", "3\n"), ("3 1\n1 2 7\n", "-1\n")],
        tests=[("2 1\n1 2 1000000000\n", "1000000000\n"), ("3 3\n1 2 1\n2 3 1\n1 3 5\n", "2\n")],
        ref='''
        import sys
        import heapq
        data = sys.stdin.read().split()
        n, m = int(data[0]), int(data[1])
        adj = [[] for _ in range(n + 1)]
        for k in range(m):
            u, v, w = (int(x) for x in data[2 + 3 * k:5 + 3 * k])
            adj[u].append((v, w))
            adj[v].append((u, w))
        dist = [None] * (n + 1)
        heap = [(0, 1)]
        while heap:
            d, u = heapq.heappop(heap)
            if dist[u] is not None:
                continue
            dist[u] = d
            for v, w in adj[u]:
                if dist[v] is None:
                    heapq.heappush(heap, (d + w, v))
        print(dist[n] if dist[n] is not None else -1)
        ''',
        gen='''
        n = rng.randint(2, 10)
        edges = [f"{rng.randint(1, n)} {rng.randint(1, n)} {rng.randint(1, 20)}" for _ in range(rng.randint(0, 15))]
        return f"{n} {len(edges)}\\n" + "".join(e + "\\n" for e in edges)
        ''',
    ),
    prog(
        "knapsack_01", 0.55,
        "Choose items of total weight at most W with the largest total value (each item at most once).",
        input="n and W (1 <= n <= 100, 1 <= W <= 10^5), then n lines `weight value`.",
        output="The largest total value.",
        examples=[("3 8\n3 30\n4 50\n5 60\n", "90\n"), ("1 1\n2 10\n", "0\n")],
        tests=[("2 10\n5 10\n5 20\n", "30\n"), ("4 7\n1 1\n3 4\n4 5\n5 7\n", "9\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        n, cap = int(data[0]), int(data[1])
        best = [0] * (cap + 1)
        for k in range(n):
            w, v = int(data[2 + 2 * k]), int(data[3 + 2 * k])
            for c in range(cap, w - 1, -1):
                if best[c - w] + v > best[c]:
                    best[c] = best[c - w] + v
        print(best[cap])
        ''',
        gen='''
        n = rng.randint(1, 10)
        items = [f"{rng.randint(1, 20)} {rng.randint(1, 50)}" for _ in range(n)]
        return f"{n} {rng.randint(1, 60)}\\n" + "\\n".join(items) + "\\n"
        ''',
    ),
    prog(
        "lcs_strings", 0.45,
        "Find the length of the longest common subsequence of two strings.",
        input="Two lines, each a non-empty string of lower-case letters (length <= 3000).",
        output="The length of their longest common subsequence.",
        examples=[("abcde\nace\n", "3\n"), ("abc\ndef\n", "0\n")],
        tests=[("a\na\n", "1\n"), ("abcbdab\nbdcaba\n", "4\n")],
        ref='''
        import sys
        a, b = sys.stdin.read().split()[:2]
        prev = [0] * (len(b) + 1)
        for ca in a:
            cur = [0]
            for j, cb in enumerate(b, 1):
                cur.append(prev[j - 1] + 1 if ca == cb else max(prev[j], cur[j - 1]))
            prev = cur
        print(prev[-1])
        ''',
        gen="return word(rng, 1, 40, 'abc') + '\\n' + word(rng, 1, 40, 'abc') + '\\n'",
    ),
    prog(
        "edit_distance_io", 0.5,
        "Find the edit (Levenshtein) distance between two strings: the fewest insertions, "
        "deletions and substitutions of single characters turning one into the other.",
        input="Two lines, each a non-empty string of lower-case letters (length <= 3000).",
        output="The edit distance.",
        examples=[("kitten\nsitting\n", "3\n"), ("abc\nabc\n", "0\n")],
        tests=[("a\nb\n", "1\n"), ("horse\nros\n", "3\n"), ("intention\nexecution\n", "5\n")],
        ref='''
        import sys
        a, b = sys.stdin.read().split()[:2]
        prev = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            cur = [i]
            for j, cb in enumerate(b, 1):
                cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
            prev = cur
        print(prev[-1])
        ''',
        gen="return word(rng, 1, 30, 'abcd') + '\\n' + word(rng, 1, 30, 'abcd') + '\\n'",
    ),
    prog(
        "max_subarray_io", 0.35,
        "Find the largest sum of a non-empty contiguous subarray.",
        input="n (1 <= n <= 10^5), then n integers (|x| <= 10^9).",
        output="The largest subarray sum.",
        examples=[("9\n-2 1 -3 4 -1 2 1 -5 4\n", "6\n"), ("1\n-5\n", "-5\n")],
        tests=[("3\n-3 -1 -2\n", "-1\n"), ("5\n5 4 -1 7 8\n", "23\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        xs = [int(x) for x in data[1:1 + int(data[0])]]
        best = cur = xs[0]
        for x in xs[1:]:
            cur = max(x, cur + x)
            best = max(best, cur)
        print(best)
        ''',
        gen='''
        xs = ints(rng, rng.randint(1, 40), -10**9, 10**9)
        return f"{len(xs)}\\n{' '.join(map(str, xs))}\\n"
        ''',
    ),
    prog(
        "kth_largest", 0.2,
        "Find the k-th largest value of an array (counting repeated values separately).",
        input="n and k (1 <= k <= n <= 10^5), then n integers.",
        output="The k-th largest value.",
        examples=[("5 2\n3 1 5 2 4\n", "4\n"), ("3 3\n7 7 1\n", "1\n")],
        tests=[("1 1\n-9\n", "-9\n"), ("4 2\n5 5 5 1\n", "5\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        n, k = int(data[0]), int(data[1])
        print(sorted((int(x) for x in data[2:2 + n]), reverse=True)[k - 1])
        ''',
        gen='''
        xs = ints(rng, rng.randint(1, 20), -50, 50)
        return f"{len(xs)} {rng.randint(1, len(xs))}\\n{' '.join(map(str, xs))}\\n"
        ''',
    ),
    prog(
        "word_frequencies", 0.3,
        "Count word frequencies in a text.",
        input="Any number of lines of lower-case words separated by spaces.",
        output="One line `word count` per distinct word, by decreasing count, ties in alphabetical "
               "order.",
        examples=[("b a b\nc a b\n", "b 3\na 2\nc 1\n"), ("x\n", "x 1\n")],
        tests=[("the cat the end\n", "the 2\ncat 1\nend 1\n"), ("z y x\n", "x 1\ny 1\nz 1\n")],
        ref='''
        import sys
        counts = {}
        for w in sys.stdin.read().split():
            counts[w] = counts.get(w, 0) + 1
        for w in sorted(counts, key=lambda w: (-counts[w], w)):
            print(w, counts[w])
        ''',
        gen='''
        lines = [" ".join(rng.choice(["a", "b", "cat", "dog", "e"]) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(1, 3))]
        return "\\n".join(lines) + "\\n"
        ''',
    ),
    prog(
        "merge_intervals_io", 0.45,
        "Merge overlapping closed intervals (touching intervals such as [1,2] and [2,3] merge).",
        input="n (1 <= n <= 10^5), then n lines `l r` with l <= r.",
        output="The merged intervals sorted by start, one `l r` per line.",
        examples=[("3\n1 3\n2 6\n8 10\n", "1 6\n8 10\n"), ("2\n5 6\n1 2\n", "1 2\n5 6\n")],
        tests=[("2\n1 4\n4 5\n", "1 5\n"), ("3\n1 10\n2 3\n11 12\n", "1 10\n11 12\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        n = int(data[0])
        items = sorted((int(data[1 + 2 * k]), int(data[2 + 2 * k])) for k in range(n))
        merged = []
        for l, r in items:
            if merged and l <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], r)
            else:
                merged.append([l, r])
        print("\\n".join(f"{l} {r}" for l, r in merged))
        ''',
        gen='''
        items = []
        for _ in range(rng.randint(1, 8)):
            l = rng.randint(0, 40)
            items.append(f"{l} {l + rng.randint(0, 8)}")
        return f"{len(items)}\\n" + "\\n".join(items) + "\\n"
        ''',
    ),
    prog(
        "rotate_grid", 0.3,
        "Rotate a matrix 90 degrees clockwise.",
        input="r and c (1 <= r, c <= 100), then r lines of c integers.",
        output="The rotated matrix: c lines of r integers.",
        examples=[("2 2\n1 2\n3 4\n", "3 1\n4 2\n"), ("1 3\n1 2 3\n", "1\n2\n3\n")],
        tests=[("3 1\n1\n2\n3\n", "3 2 1\n"), ("2 3\n1 2 3\n4 5 6\n", "4 1\n5 2\n6 3\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        r, c = int(data[0]), int(data[1])
        m = [data[2 + i * c:2 + (i + 1) * c] for i in range(r)]
        for row in zip(*m[::-1]):
            print(" ".join(row))
        ''',
        gen='''
        r, c = rng.randint(1, 5), rng.randint(1, 5)
        return f"{r} {c}\\n" + "\\n".join(" ".join(map(str, ints(rng, c, 0, 99))) for _ in range(r)) + "\\n"
        ''',
    ),
    prog(
        "big_factorial", 0.15,
        "Print n! exactly.",
        input="One integer n (0 <= n <= 500).",
        output="n! with all its digits.",
        examples=[("5\n", "120\n"), ("0\n", "1\n")],
        tests=[("20\n", "2432902008176640000\n"), ("25\n", "15511210043330985984000000\n")],
        ref='''
        n = int(input())
        out = 1
        for k in range(2, n + 1):
            out *= k
        print(out)
        ''',
        gen="return f'{rng.randint(0, 500)}\\n'",
    ),
    prog(
        "fibonacci_mod", 0.6,
        "Compute a huge Fibonacci number modulo 1000000007 (F(0) = 0, F(1) = 1).",
        input="One integer n (0 <= n <= 10^18).",
        output="F(n) mod 1000000007.",
        examples=[("10\n", "55\n"), ("0\n", "0\n")],
        tests=[("1\n", "1\n"), ("50\n", "586268941\n"), ("2\n", "1\n")],
        ref='''
        MOD = 10**9 + 7

        def fib(n):
            # (F(n), F(n + 1)) by fast doubling
            if n == 0:
                return 0, 1
            a, b = fib(n // 2)
            c = a * (2 * b - a) % MOD
            d = (a * a + b * b) % MOD
            return (d, (c + d) % MOD) if n % 2 else (c, d)

        print(fib(int(input()))[0])
        ''',
        gen="return f'{rng.choice([rng.randint(0, 90), rng.randint(0, 10**18)])}\\n'",
    ),
    prog(
        "inversions_io", 0.6,
        "Count the pairs i < j with a_i > a_j.",
        input="n (1 <= n <= 10^5), then n integers.",
        output="The number of inversions.",
        examples=[("5\n2 4 1 3 5\n", "3\n"), ("3\n1 2 3\n", "0\n")],
        tests=[("5\n5 4 3 2 1\n", "10\n"), ("2\n1 1\n", "0\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        xs = [int(x) for x in data[1:1 + int(data[0])]]
        ranks = {v: i + 1 for i, v in enumerate(sorted(set(xs)))}
        tree = [0] * (len(ranks) + 1)
        inversions = 0
        for seen, x in enumerate(xs):
            r = ranks[x]
            i = r
            le = 0
            while i:
                le += tree[i]
                i -= i & -i
            inversions += seen - le
            i = r
            while i < len(tree):
                tree[i] += 1
                i += i & -i
        print(inversions)
        ''',
        gen='''
        xs = ints(rng, rng.randint(1, 300), 0, 100)
        return f"{len(xs)}\\n{' '.join(map(str, xs))}\\n"
        ''',
    ),
    prog(
        "prime_count_queries", 0.45,
        "Answer queries: how many primes are at most n?",
        input="q (1 <= q <= 10^5), then q integers n (1 <= n <= 10^6).",
        output="For each query, the number of primes <= n.",
        examples=[("3\n10\n1\n2\n", "4\n0\n1\n"), ("1\n100\n", "25\n")],
        tests=[("2\n1000\n3\n", "168\n2\n"), ("1\n30\n", "10\n")],
        ref='''
        import sys
        data = sys.stdin.read().split()
        qs = [int(x) for x in data[1:1 + int(data[0])]]
        top = max(qs)
        sieve = bytearray([1]) * (top + 1)
        sieve[0] = 0
        if top >= 1:
            sieve[1] = 0
        for k in range(2, int(top ** 0.5) + 1):
            if sieve[k]:
                sieve[k * k::k] = bytearray(len(range(k * k, top + 1, k)))
        count = [0] * (top + 1)
        running = 0
        for k in range(top + 1):
            running += sieve[k]
            count[k] = running
        print("\\n".join(str(count[n]) for n in qs))
        ''',
        gen='''
        qs = [rng.choice([rng.randint(1, 100), rng.randint(1, 50000)]) for _ in range(rng.randint(1, 6))]
        return f"{len(qs)}\\n" + "\\n".join(map(str, qs)) + "\\n"
        ''',
    ),
    prog(
        "modular_power", 0.3,
        "Compute a^b mod m.",
        input="Three integers a, b, m (0 <= a, b <= 10^18, 1 <= m <= 10^9).",
        output="a^b mod m (with 0^0 = 1).",
        examples=[("2 10 1000\n", "24\n"), ("3 0 7\n", "1\n")],
        tests=[("5 3 13\n", "8\n"), ("7 2 1\n", "0\n"), ("10 9 7\n", "6\n")],
        ref='''
        a, b, m = map(int, input().split())
        print(pow(a, b, m))
        ''',
        gen='return f"{rng.randint(0, 10**18)} {rng.randint(0, 10**18)} {rng.randint(1, 10**9)}\\n"',
    ),
]
