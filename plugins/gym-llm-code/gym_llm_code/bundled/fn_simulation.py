"""Simulation function tasks: follow the rules step by step."""

from ..problems import fn

TOPIC = "simulation"

PROBLEMS = [
    fn(
        "robot_position", 0.2,
        "A robot starts at `(0, 0)` and follows `commands`, a string of `U` (y + 1), `D` (y - 1), "
        "`L` (x - 1) and `R` (x + 1). Return its final position as `[x, y]`.",
        examples=[(("UURDL",), [0, 1]), (("",), [0, 0])],
        tests=[(("RRRR",), [4, 0]), (("UDLR",), [0, 0]), (("LLD",), [-2, -1])],
        ref='''
        def robot_position(commands: str) -> list[int]:
            x = y = 0
            for c in commands:
                dx, dy = {"U": (0, 1), "D": (0, -1), "L": (-1, 0), "R": (1, 0)}[c]
                x, y = x + dx, y + dy
            return [x, y]
        ''',
        gen="return (word(rng, 0, 20, 'UDLR'),)",
    ),
    fn(
        "bank_account", 0.3,
        "Process `ops`, a list of `[\"deposit\", amount]` and `[\"withdraw\", amount]`, on an "
        "account starting at 0. A withdrawal larger than the balance is rejected. Return "
        "`[final balance, number of rejected withdrawals]`.",
        examples=[(([["deposit", 100], ["withdraw", 30], ["withdraw", 100]],), [70, 1]), (([],), [0, 0])],
        tests=[(([["withdraw", 1]],), [0, 1]), (([["deposit", 5], ["deposit", 5], ["withdraw", 10]],), [0, 0]),
               (([["deposit", 10], ["withdraw", 11], ["withdraw", 10]],), [0, 1])],
        ref='''
        def bank_account(ops: list[list]) -> list[int]:
            balance = rejected = 0
            for kind, amount in ops:
                if kind == "deposit":
                    balance += amount
                elif amount > balance:
                    rejected += 1
                else:
                    balance -= amount
            return [balance, rejected]
        ''',
        gen="return ([[rng.choice(['deposit', 'withdraw']), rng.randint(1, 50)] for _ in range(rng.randint(0, 8))],)",
    ),
    fn(
        "life_step", 0.5,
        "Advance Conway's Game of Life by one step. `grid` is a list of equally long strings of "
        "`.` (dead) and `#` (alive); cells outside the grid are dead. A live cell with 2 or 3 live "
        "neighbours survives, a dead cell with exactly 3 becomes alive, all others are dead.",
        examples=[(([".#.", ".#.", ".#."],), ["...", "###", "..."]), ((["#"],), ["."])],
        tests=[(([],), []), ((["##", "##"],), ["##", "##"]),
               ((["....", ".##.", ".##.", "...."],), ["....", ".##.", ".##.", "...."]), ((["#.#"],), ["..."])],
        ref='''
        def life_step(grid: list[str]) -> list[str]:
            rows = len(grid)
            cols = len(grid[0]) if grid else 0
            def alive(r, c):
                return 0 <= r < rows and 0 <= c < cols and grid[r][c] == "#"
            out = []
            for r in range(rows):
                line = ""
                for c in range(cols):
                    n = sum(alive(r + dr, c + dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if dr or dc)
                    line += "#" if n == 3 or (n == 2 and grid[r][c] == "#") else "."
                out.append(line)
            return out
        ''',
        gen='''
        cols = rng.randint(1, 6)
        return (["".join(rng.choice(".#") for _ in range(cols)) for _ in range(rng.randint(1, 6))],)
        ''',
    ),
    fn(
        "josephus", 0.4,
        "`n` people stand in a circle, numbered 1 to `n`. Counting starts at person 1 and every "
        "`k`-th person is removed, the count continuing from the next person. Return the number "
        "of the last person left.",
        examples=[((7, 3), 4), ((1, 5), 1)],
        tests=[((5, 2), 3), ((6, 1), 6), ((10, 3), 4)],
        ref='''
        def josephus(n: int, k: int) -> int:
            survivor = 0
            for size in range(2, n + 1):
                survivor = (survivor + k) % size
            return survivor + 1
        ''',
        gen="return (rng.randint(1, 300), rng.randint(1, 10))",
    ),
    fn(
        "vending_machine", 0.3,
        "A vending machine sells one item for `price`. Coins from `coins` are inserted in order "
        "until the total reaches the price; then the item is sold and the change returned (later "
        "coins are not inserted). Return `[True, change]`, or `[False, total inserted]` if the "
        "coins run out first (they are refunded).",
        examples=[((100, [25, 25, 50]), [True, 0]), ((75, [50, 50]), [True, 25])],
        tests=[((10, []), [False, 0]), ((10, [5]), [False, 5]), ((10, [5, 10, 20]), [True, 5])],
        ref='''
        def vending_machine(price: int, coins: list[int]) -> list:
            total = 0
            for c in coins:
                total += c
                if total >= price:
                    return [True, total - price]
            return [False, total]
        ''',
        gen="return (rng.randint(1, 100), [rng.choice([5, 10, 25, 50]) for _ in range(rng.randint(0, 6))])",
    ),
    fn(
        "elementary_automaton", 0.55,
        "Run the elementary cellular automaton with Wolfram rule number `rule` (0-255) for "
        "`steps` steps on `cells`, a string of `0`s and `1`s that wraps around at both ends. The "
        "new state of a cell is bit `4*left + 2*self + right` of `rule`. Return the final string.",
        examples=[(("010", 90, 1), "101"), (("0000", 30, 3), "0000")],
        tests=[(("1", 90, 1), "0"), (("00100", 30, 1), "01110"), (("10", 90, 2), "00"), (("0110", 204, 5), "0110")],
        ref='''
        def elementary_automaton(cells: str, rule: int, steps: int) -> str:
            n = len(cells)
            state = [int(c) for c in cells]
            for _ in range(steps):
                state = [(rule >> (4 * state[i - 1] + 2 * state[i] + state[(i + 1) % n])) & 1 for i in range(n)]
            return "".join(map(str, state))
        ''',
        gen="return (word(rng, 1, 12, '01'), rng.randint(0, 255), rng.randint(0, 6))",
    ),
    fn(
        "parking_lot", 0.35,
        "A parking lot has `capacity` places. Process `events`, a list of `[\"in\", car]` and "
        "`[\"out\", car]`, in order: a car enters only if there is a free place and it is not "
        "already inside; leaving when not inside does nothing. Return the cars inside at the end, "
        "sorted.",
        examples=[((2, [["in", "A"], ["in", "B"], ["in", "C"], ["out", "A"], ["in", "D"]]), ["B", "D"]),
                  ((1, []), [])],
        tests=[((0, [["in", "X"]]), []), ((3, [["in", "A"], ["out", "A"], ["out", "A"]]), []),
               ((2, [["in", "A"], ["in", "A"]]), ["A"])],
        ref='''
        def parking_lot(capacity: int, events: list[list[str]]) -> list[str]:
            inside = set()
            for kind, car in events:
                if kind == "in":
                    if car not in inside and len(inside) < capacity:
                        inside.add(car)
                else:
                    inside.discard(car)
            return sorted(inside)
        ''',
        gen="return (rng.randint(0, 3), [[rng.choice(['in', 'in', 'out']), rng.choice('ABCDE')] for _ in range(rng.randint(0, 10))])",
    ),
    fn(
        "stack_machine", 0.45,
        "Run `program`, a list of instructions for a stack machine: `push N`, `pop`, `add` and "
        "`mul` (pop two, push the result), `dup` (push a copy of the top) and `swap` (swap the two "
        "top values). An instruction that needs more values than the stack has is skipped. Return "
        "the final stack, bottom first.",
        examples=[((["push 2", "push 3", "add", "dup", "mul"],), [25]), (([],), [])],
        tests=[((["pop"],), []), ((["push 1", "push 2", "swap"],), [2, 1]), ((["push 5", "add"],), [5]),
               ((["push -3", "dup", "dup", "mul", "mul"],), [-27])],
        ref='''
        def stack_machine(program: list[str]) -> list[int]:
            stack = []
            need = {"pop": 1, "add": 2, "mul": 2, "dup": 1, "swap": 2}
            for line in program:
                op, *arg = line.split()
                if op == "push":
                    stack.append(int(arg[0]))
                    continue
                if len(stack) < need[op]:
                    continue
                if op == "pop":
                    stack.pop()
                elif op == "add":
                    stack.append(stack.pop() + stack.pop())
                elif op == "mul":
                    stack.append(stack.pop() * stack.pop())
                elif op == "dup":
                    stack.append(stack[-1])
                else:
                    stack[-1], stack[-2] = stack[-2], stack[-1]
            return stack
        ''',
        gen='''
        ops = ["pop", "add", "mul", "dup", "swap"]
        return ([f"push {rng.randint(-5, 9)}" if rng.random() < 0.45 else rng.choice(ops) for _ in range(rng.randint(0, 10))],)
        ''',
    ),
    fn(
        "round_robin", 0.5,
        "Schedule `tasks`, a list of `[name, time needed]`, round robin: each task in turn runs "
        "for up to `quantum` time units, then goes to the back of the queue if unfinished. Return "
        "the task names in the order they finish.",
        examples=[(([["a", 3], ["b", 1], ["c", 2]], 1), ["b", "c", "a"]), (([], 2), [])],
        tests=[(([["x", 5]], 2), ["x"]), (([["a", 2], ["b", 2]], 2), ["a", "b"]),
               (([["a", 4], ["b", 1], ["c", 3]], 2), ["b", "a", "c"])],
        ref='''
        from collections import deque

        def round_robin(tasks: list[list], quantum: int) -> list[str]:
            queue = deque([name, need] for name, need in tasks)
            done = []
            while queue:
                name, need = queue.popleft()
                if need <= quantum:
                    done.append(name)
                else:
                    queue.append([name, need - quantum])
            return done
        ''',
        gen="return ([[c, rng.randint(1, 9)] for c in 'abcdef'[:rng.randint(0, 6)]], rng.randint(1, 4))",
    ),
    fn(
        "lru_misses", 0.45,
        "Simulate an LRU cache holding at most `capacity` keys (possibly 0) over the key accesses "
        "`accesses`; an access to a key not in the cache is a miss and inserts it, evicting the "
        "least recently used key if the cache is full. Return the number of misses.",
        examples=[((2, [1, 2, 1, 3, 2]), 4), ((1, []), 0)],
        tests=[((1, [1, 1, 2, 1]), 3), ((3, [1, 2, 3, 1, 2, 3]), 3), ((0, [1, 1]), 2)],
        ref='''
        def lru_misses(capacity: int, accesses: list[int]) -> int:
            cache = []
            misses = 0
            for key in accesses:
                if key in cache:
                    cache.remove(key)
                    cache.append(key)
                    continue
                misses += 1
                if capacity == 0:
                    continue
                if len(cache) == capacity:
                    cache.pop(0)
                cache.append(key)
            return misses
        ''',
        gen="return (rng.randint(0, 4), ints(rng, rng.randint(0, 15), 0, 5))",
    ),
    fn(
        "tic_tac_toe_winner", 0.3,
        "`board` is three strings of three characters `X`, `O` or `.`. Return `\"X\"` or `\"O\"` "
        "if that player has three in a row (row, column or diagonal), else `\"\"`. At most one "
        "player has a line.",
        examples=[((["XXX", "OO.", "..."],), "X"), ((["XO.", "OX.", "..X"],), "X")],
        tests=[((["...", "...", "..."],), ""), ((["OXX", "OXO", "O.."],), "O"), ((["XOX", "XOO", "OXX"],), "")],
        ref='''
        def tic_tac_toe_winner(board: list[str]) -> str:
            lines = [row for row in board]
            lines += ["".join(board[r][c] for r in range(3)) for c in range(3)]
            lines += ["".join(board[i][i] for i in range(3)), "".join(board[i][2 - i] for i in range(3))]
            for line in lines:
                if line in ("XXX", "OOO"):
                    return line[0]
            return ""
        ''',
        gen='''
        while True:
            board = ["".join(rng.choice("XO..") for _ in range(3)) for _ in range(3)]
            lines = board + ["".join(board[r][c] for r in range(3)) for c in range(3)]
            lines += ["".join(board[i][i] for i in range(3)), "".join(board[i][2 - i] for i in range(3))]
            if not ("XXX" in lines and "OOO" in lines):
                return (board,)
        ''',
    ),
    fn(
        "langtons_ant", 0.55,
        "Langton's ant starts on an infinite all-white grid at `(0, 0)` facing up. Each step: on "
        "a white cell it turns 90 degrees right, on a black cell 90 degrees left; then it flips "
        "the colour of its cell and moves one cell forward. Return the number of black cells "
        "after `steps` steps.",
        examples=[((0,), 0), ((1,), 1)],
        tests=[((2,), 2), ((4,), 4), ((5,), 3), ((10,), 6)],
        ref='''
        def langtons_ant(steps: int) -> int:
            black = set()
            x = y = 0
            dx, dy = 0, 1
            for _ in range(steps):
                if (x, y) in black:
                    dx, dy = -dy, dx
                    black.remove((x, y))
                else:
                    dx, dy = dy, -dx
                    black.add((x, y))
                x, y = x + dx, y + dy
            return len(black)
        ''',
        gen="return (rng.randint(0, 12000),)",
    ),
    fn(
        "elevator_travel", 0.25,
        "An elevator starts at floor `start` and visits the floors of `requests` in order. Return "
        "the total number of floors it travels.",
        examples=[(([5, 2, 8], 0), 14), (([], 3), 0)],
        tests=[(([3, 3], 3), 0), (([1], 10), 9), (([-1, 1], 0), 3)],
        ref='''
        def elevator_travel(requests: list[int], start: int) -> int:
            total = 0
            for floor in requests:
                total += abs(floor - start)
                start = floor
            return total
        ''',
        gen="return (ints(rng, rng.randint(0, 8), -3, 20), rng.randint(0, 10))",
    ),
    fn(
        "gas_station", 0.5,
        "Stations on a circular route each give `gas[i]` fuel; driving from station `i` to the "
        "next costs `cost[i]`. Starting with an empty tank, return the index of the only station "
        "from which you can drive the whole circle, or -1 if none can.",
        examples=[(([1, 2, 3, 4, 5], [3, 4, 5, 1, 2]), 3), (([2, 3, 4], [3, 4, 3]), -1)],
        tests=[(([5], [4]), 0), (([1], [2]), -1), (([3, 1, 1], [1, 2, 2]), 0)],
        ref='''
        def gas_station(gas: list[int], cost: list[int]) -> int:
            if sum(gas) < sum(cost):
                return -1
            start = tank = 0
            for i in range(len(gas)):
                tank += gas[i] - cost[i]
                if tank < 0:
                    start, tank = i + 1, 0
            return start
        ''',
        gen='''
        n = rng.randint(1, 8)
        return (ints(rng, n, 0, 6), ints(rng, n, 0, 6))
        ''',
    ),
    fn(
        "population_years", 0.15,
        "A population of `p0` (at least 100) grows each year by `rate` percent (`rate >= 1`), "
        "rounded down to a whole number each year (`p = p + p * rate // 100`). Return the number "
        "of years until it is at least `target` (0 if it already is).",
        examples=[((1000, 10, 1500), 5), ((100, 50, 100), 0)],
        tests=[((100, 100, 1600), 4), ((500, 1, 400), 0), ((200, 10, 242), 2)],
        ref='''
        def population_years(p0: int, rate: int, target: int) -> int:
            years = 0
            while p0 < target:
                p0 += p0 * rate // 100
                years += 1
            return years
        ''',
        gen="return (rng.randint(100, 1000), rng.randint(1, 30), rng.randint(0, 5000))",
    ),
    fn(
        "clock_angle", 0.25,
        "Return the smaller angle in degrees (a float) between the hour and minute hands of an "
        "analog clock showing `h:m` (`1 <= h <= 12`, `0 <= m <= 59`).",
        examples=[((3, 0), 90.0), ((12, 30), 165.0)],
        tests=[((9, 0), 90.0), ((6, 0), 180.0), ((3, 15), 7.5), ((12, 0), 0.0)],
        ref='''
        def clock_angle(h: int, m: int) -> float:
            angle = abs((h % 12) * 30 + m * 0.5 - m * 6)
            return min(angle, 360 - angle)
        ''',
        gen="return (rng.randint(1, 12), rng.randint(0, 59))",
    ),
]
