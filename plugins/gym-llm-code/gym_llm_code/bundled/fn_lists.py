"""List manipulation function tasks."""

from ..problems import fn

TOPIC = "lists"

PROBLEMS = [
    fn(
        "second_largest", 0.2,
        "Return the second largest distinct value in `xs`, or `None` if there are fewer than two "
        "distinct values.",
        examples=[(([3, 1, 2],), 2), (([5, 5],), None)],
        tests=[(([],), None), (([1, 2, 2, 3, 3],), 2), (([-1, -2],), -2), (([7],), None)],
        ref='''
        def second_largest(xs: list[int]) -> int | None:
            distinct = sorted(set(xs))
            return distinct[-2] if len(distinct) >= 2 else None
        ''',
        gen="return (ints(rng, rng.randint(0, 8), -5, 5),)",
    ),
    fn(
        "rotate_list", 0.15,
        "Return `xs` rotated to the right by `k` positions (`k` may be negative, meaning to the "
        "left, or larger than the length).",
        examples=[(([1, 2, 3, 4, 5], 2), [4, 5, 1, 2, 3]), (([], 3), [])],
        tests=[(([1, 2, 3], 3), [1, 2, 3]), (([1, 2, 3], -1), [2, 3, 1]), (([1], 10), [1]),
               (([1, 2], 1), [2, 1])],
        ref='''
        def rotate_list(xs: list[int], k: int) -> list[int]:
            if not xs:
                return []
            k %= len(xs)
            return xs[-k:] + xs[:-k] if k else list(xs)
        ''',
        gen="return (ints(rng, rng.randint(0, 7)), rng.randint(-10, 10))",
    ),
    fn(
        "chunk", 0.15,
        "Split `xs` into consecutive chunks of `n` elements (`n >= 1`); the last chunk may be "
        "shorter.",
        examples=[(([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]), (([], 3), [])],
        tests=[(([1, 2, 3], 3), [[1, 2, 3]]), (([1, 2, 3], 5), [[1, 2, 3]]),
               (([1, 2, 3, 4], 1), [[1], [2], [3], [4]])],
        ref='''
        def chunk(xs: list[int], n: int) -> list[list[int]]:
            return [xs[i:i + n] for i in range(0, len(xs), n)]
        ''',
        gen="return (ints(rng, rng.randint(0, 10)), rng.randint(1, 4))",
    ),
    fn(
        "dedupe", 0.1,
        "Return `xs` without repeated elements, keeping the first occurrence of each in order.",
        examples=[(([1, 2, 1, 3, 2],), [1, 2, 3]), (([],), [])],
        tests=[(([5, 5, 5],), [5]), (([3, 2, 1],), [3, 2, 1]), (([0, 1, 0, 1],), [0, 1])],
        ref='''
        def dedupe(xs: list[int]) -> list[int]:
            seen = set()
            out = []
            for x in xs:
                if x not in seen:
                    seen.add(x)
                    out.append(x)
            return out
        ''',
        gen="return (ints(rng, rng.randint(0, 12), 0, 6),)",
    ),
    fn(
        "running_sum", 0.1,
        "Return the running sums of `xs`: element `i` is `xs[0] + ... + xs[i]`.",
        examples=[(([1, 2, 3],), [1, 3, 6]), (([],), [])],
        tests=[(([5],), [5]), (([1, -1, 1, -1],), [1, 0, 1, 0]), (([0, 0],), [0, 0])],
        ref='''
        def running_sum(xs: list[int]) -> list[int]:
            out = []
            total = 0
            for x in xs:
                total += x
                out.append(total)
            return out
        ''',
        gen="return (ints(rng, rng.randint(0, 10)),)",
    ),
    fn(
        "pairwise_diff", 0.1,
        "Return the differences between neighbours: element `i` is `xs[i + 1] - xs[i]`.",
        examples=[(([1, 4, 9],), [3, 5]), (([2],), [])],
        tests=[(([],), []), (([5, 3, 3],), [-2, 0]), (([0, 10, -10],), [10, -20])],
        ref='''
        def pairwise_diff(xs: list[int]) -> list[int]:
            return [b - a for a, b in zip(xs, xs[1:])]
        ''',
        gen="return (ints(rng, rng.randint(0, 10)),)",
    ),
    fn(
        "merge_sorted", 0.25,
        "Merge the two ascending lists `a` and `b` into one ascending list.",
        examples=[(([1, 3, 5], [2, 4]), [1, 2, 3, 4, 5]), (([], [1]), [1])],
        tests=[(([], []), []), (([1, 1], [1]), [1, 1, 1]), (([-3, 0], [-5, 10]), [-5, -3, 0, 10])],
        ref='''
        def merge_sorted(a: list[int], b: list[int]) -> list[int]:
            out = []
            i = j = 0
            while i < len(a) and j < len(b):
                if a[i] <= b[j]:
                    out.append(a[i])
                    i += 1
                else:
                    out.append(b[j])
                    j += 1
            return out + a[i:] + b[j:]
        ''',
        gen="return (sorted(ints(rng, rng.randint(0, 6), -20, 20)), sorted(ints(rng, rng.randint(0, 6), -20, 20)))",
    ),
    fn(
        "two_sum", 0.3,
        "Return `[i, j]` with `i < j` and `xs[i] + xs[j] == target`, choosing the smallest "
        "possible `j` and then the smallest `i`; return `None` if there is no such pair.",
        examples=[(([2, 7, 11, 15], 9), [0, 1]), (([3, 3], 6), [0, 1])],
        tests=[(([1, 2, 3], 7), None), (([], 0), None), (([3, 1, 4, 2, 3], 6), [2, 3]),
               (([0, -1, 1], 0), [1, 2])],
        ref='''
        def two_sum(xs: list[int], target: int) -> list[int] | None:
            first = {}
            for j, x in enumerate(xs):
                if target - x in first:
                    return [first[target - x], j]
                first.setdefault(x, j)
            return None
        ''',
        gen="return (ints(rng, rng.randint(0, 10), -10, 10), rng.randint(-10, 10))",
    ),
    fn(
        "move_zeros", 0.2,
        "Return `xs` with every zero moved to the end, keeping the order of the other elements.",
        examples=[(([0, 1, 0, 3, 12],), [1, 3, 12, 0, 0]), (([],), [])],
        tests=[(([0],), [0]), (([1, 2],), [1, 2]), (([0, 0, 1],), [1, 0, 0])],
        ref='''
        def move_zeros(xs: list[int]) -> list[int]:
            rest = [x for x in xs if x != 0]
            return rest + [0] * (len(xs) - len(rest))
        ''',
        gen="return (ints(rng, rng.randint(0, 10), -2, 3),)",
    ),
    fn(
        "max_subarray_sum", 0.45,
        "Return the largest sum of a non-empty contiguous sublist of `xs` (`xs` is not empty).",
        examples=[(([-2, 1, -3, 4, -1, 2, 1, -5, 4],), 6), (([1],), 1)],
        tests=[(([-3, -1, -2],), -1), (([5, 4, -1, 7, 8],), 23), (([0, 0],), 0)],
        ref='''
        def max_subarray_sum(xs: list[int]) -> int:
            best = current = xs[0]
            for x in xs[1:]:
                current = max(x, current + x)
                best = max(best, current)
            return best
        ''',
        gen="return (ints(rng, rng.randint(1, 15), -10, 10),)",
    ),
    fn(
        "intersection", 0.2,
        "Return the distinct values present in both `a` and `b`, in ascending order.",
        examples=[(([1, 2, 2, 3], [2, 3, 4]), [2, 3]), (([], [1]), [])],
        tests=[(([5, 1], [1, 5]), [1, 5]), (([1], [2]), []), (([3, 3], [3]), [3])],
        ref='''
        def intersection(a: list[int], b: list[int]) -> list[int]:
            return sorted(set(a) & set(b))
        ''',
        gen="return (ints(rng, rng.randint(0, 8), 0, 9), ints(rng, rng.randint(0, 8), 0, 9))",
    ),
    fn(
        "majority_element", 0.3,
        "Return the element that occurs more than `len(xs) / 2` times, or `None` if there is none.",
        examples=[(([3, 2, 3],), 3), (([1, 2],), None)],
        tests=[(([],), None), (([2, 2, 1, 1, 1, 2, 2],), 2), (([5],), 5), (([1, 1, 2, 2],), None)],
        ref='''
        def majority_element(xs: list[int]) -> int | None:
            for x in set(xs):
                if xs.count(x) * 2 > len(xs):
                    return x
            return None
        ''',
        gen="return (ints(rng, rng.randint(0, 9), 1, 3),)",
    ),
    fn(
        "product_except_self", 0.45,
        "Return a list whose element `i` is the product of all elements of `xs` except `xs[i]`.",
        examples=[(([1, 2, 3, 4],), [24, 12, 8, 6]), (([0, 1],), [1, 0])],
        tests=[(([5],), [1]), (([],), []), (([2, 0, 0],), [0, 0, 0]), (([-1, 2, -3],), [-6, 3, -2])],
        ref='''
        def product_except_self(xs: list[int]) -> list[int]:
            out = [1] * len(xs)
            left = 1
            for i, x in enumerate(xs):
                out[i] = left
                left *= x
            right = 1
            for i in range(len(xs) - 1, -1, -1):
                out[i] *= right
                right *= xs[i]
            return out
        ''',
        gen="return (ints(rng, rng.randint(0, 7), -4, 4),)",
    ),
    fn(
        "longest_increasing_run", 0.3,
        "Return the length of the longest contiguous strictly increasing run in `xs` "
        "(0 for an empty list).",
        examples=[(([1, 2, 2, 3, 4, 1],), 3), (([],), 0)],
        tests=[(([5],), 1), (([3, 2, 1],), 1), (([1, 2, 3, 4],), 4), (([1, 3, 2, 4, 6, 8, 0],), 4)],
        ref='''
        def longest_increasing_run(xs: list[int]) -> int:
            best = run = 0
            for i, x in enumerate(xs):
                run = run + 1 if i and x > xs[i - 1] else 1
                best = max(best, run)
            return best
        ''',
        gen="return (ints(rng, rng.randint(0, 12), 0, 9),)",
    ),
    fn(
        "kth_smallest", 0.2,
        "Return the `k`-th smallest element of `xs` (1-based, counting repeated values "
        "separately); `1 <= k <= len(xs)`.",
        examples=[(([3, 1, 2], 1), 1), (([5, 3, 5, 1], 3), 5)],
        tests=[(([7], 1), 7), (([4, 4, 4], 2), 4), (([-1, -5, 10, 0], 2), -1)],
        ref='''
        def kth_smallest(xs: list[int], k: int) -> int:
            return sorted(xs)[k - 1]
        ''',
        gen='''
        xs = ints(rng, rng.randint(1, 9), -20, 20)
        return (xs, rng.randint(1, len(xs)))
        ''',
    ),
    fn(
        "find_missing", 0.2,
        "`xs` holds the numbers `0..n` except one, in any order, where `n = len(xs)`. Return the "
        "missing number.",
        examples=[(([3, 0, 1],), 2), (([0],), 1)],
        tests=[(([1],), 0), (([],), 0), (([0, 1, 2, 3, 5, 4, 7, 6, 9],), 8)],
        ref='''
        def find_missing(xs: list[int]) -> int:
            n = len(xs)
            return n * (n + 1) // 2 - sum(xs)
        ''',
        gen='''
        n = rng.randint(0, 12)
        xs = list(range(n + 1))
        xs.remove(rng.randint(0, n))
        rng.shuffle(xs)
        return (xs,)
        ''',
    ),
    fn(
        "transpose", 0.25,
        "Return the transpose of the rectangular matrix `matrix` (a list of equally long rows).",
        examples=[(([[1, 2, 3], [4, 5, 6]],), [[1, 4], [2, 5], [3, 6]]), (([],), [])],
        tests=[(([[1]],), [[1]]), (([[1, 2]],), [[1], [2]]), (([[1], [2], [3]],), [[1, 2, 3]])],
        ref='''
        def transpose(matrix: list[list[int]]) -> list[list[int]]:
            return [list(col) for col in zip(*matrix)]
        ''',
        gen='''
        cols = rng.randint(1, 4)
        return ([ints(rng, cols, 0, 9) for _ in range(rng.randint(1, 4))],)
        ''',
    ),
    fn(
        "spiral_order", 0.55,
        "Return the elements of the rectangular matrix `matrix` in clockwise spiral order, "
        "starting at the top-left corner.",
        examples=[(([[1, 2, 3], [4, 5, 6], [7, 8, 9]],), [1, 2, 3, 6, 9, 8, 7, 4, 5]), (([],), [])],
        tests=[(([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]],), [1, 2, 3, 4, 8, 12, 11, 10, 9, 5, 6, 7]),
               (([[1]],), [1]), (([[1], [2], [3]],), [1, 2, 3]), (([[1, 2], [3, 4]],), [1, 2, 4, 3])],
        ref='''
        def spiral_order(matrix: list[list[int]]) -> list[int]:
            out = []
            rows = [list(r) for r in matrix]
            while rows:
                out += rows.pop(0)
                rows = [list(r) for r in zip(*rows)][::-1]
            return out
        ''',
        gen='''
        cols = rng.randint(1, 5)
        return ([ints(rng, cols, 0, 99) for _ in range(rng.randint(1, 5))],)
        ''',
    ),
    fn(
        "rotate_matrix", 0.35,
        "Return the matrix `matrix` (a list of equally long rows) rotated 90 degrees clockwise.",
        examples=[(([[1, 2], [3, 4]],), [[3, 1], [4, 2]]), (([[1, 2, 3]],), [[1], [2], [3]])],
        tests=[(([],), []), (([[1]],), [[1]]), (([[1, 2, 3], [4, 5, 6], [7, 8, 9]],), [[7, 4, 1], [8, 5, 2], [9, 6, 3]]),
               (([[1], [2]],), [[2, 1]])],
        ref='''
        def rotate_matrix(matrix: list[list[int]]) -> list[list[int]]:
            return [list(row) for row in zip(*matrix[::-1])]
        ''',
        gen='''
        cols = rng.randint(1, 4)
        return ([ints(rng, cols, 0, 9) for _ in range(rng.randint(1, 4))],)
        ''',
    ),
    fn(
        "sliding_window_max", 0.55,
        "Return the maximum of every window of `k` consecutive elements of `xs`, left to right "
        "(an empty list when `k > len(xs)`); `k >= 1`.",
        examples=[(([1, 3, -1, -3, 5, 3, 6, 7], 3), [3, 3, 5, 5, 6, 7]), (([1], 1), [1])],
        tests=[(([4, 2], 2), [4]), (([1, 2, 3], 1), [1, 2, 3]), (([9, 8, 7, 6], 2), [9, 8, 7]),
               (([1, 2], 3), [])],
        ref='''
        from collections import deque

        def sliding_window_max(xs: list[int], k: int) -> list[int]:
            window = deque()
            out = []
            for i, x in enumerate(xs):
                while window and xs[window[-1]] <= x:
                    window.pop()
                window.append(i)
                if window[0] <= i - k:
                    window.popleft()
                if i >= k - 1:
                    out.append(xs[window[0]])
            return out
        ''',
        gen="return (ints(rng, rng.randint(0, 15), -9, 9), rng.randint(1, 5))",
    ),
    fn(
        "count_inversions", 0.6,
        "Return the number of pairs `i < j` with `xs[i] > xs[j]`. Lists may have up to a few "
        "thousand elements.",
        examples=[(([2, 4, 1, 3, 5],), 3), (([],), 0)],
        tests=[(([1, 2, 3],), 0), (([3, 2, 1],), 3), (([1, 1],), 0), (([5, 4, 3, 2, 1],), 10)],
        ref='''
        def count_inversions(xs: list[int]) -> int:
            def sort(a):
                if len(a) <= 1:
                    return a, 0
                mid = len(a) // 2
                left, x = sort(a[:mid])
                right, y = sort(a[mid:])
                merged, inv, i, j = [], x + y, 0, 0
                while i < len(left) and j < len(right):
                    if left[i] <= right[j]:
                        merged.append(left[i])
                        i += 1
                    else:
                        merged.append(right[j])
                        inv += len(left) - i
                        j += 1
                return merged + left[i:] + right[j:], inv
            return sort(list(xs))[1]
        ''',
        gen="return (ints(rng, rng.randint(0, 2000), 0, 1000),)",
    ),
    fn(
        "partition_even_odd", 0.1,
        "Return the even numbers of `xs` followed by the odd ones, each group in original order.",
        examples=[(([1, 2, 3, 4],), [2, 4, 1, 3]), (([],), [])],
        tests=[(([1, 3],), [1, 3]), (([2, 1],), [2, 1]), (([-1, -2, 0],), [-2, 0, -1])],
        ref='''
        def partition_even_odd(xs: list[int]) -> list[int]:
            return [x for x in xs if x % 2 == 0] + [x for x in xs if x % 2]
        ''',
        gen="return (ints(rng, rng.randint(0, 10), -9, 9),)",
    ),
    fn(
        "cumulative_max", 0.1,
        "Return a list whose element `i` is the maximum of `xs[0..i]`.",
        examples=[(([1, 3, 2, 5, 4],), [1, 3, 3, 5, 5]), (([],), [])],
        tests=[(([-1, -2],), [-1, -1]), (([0],), [0]), (([2, 2, 3],), [2, 2, 3])],
        ref='''
        def cumulative_max(xs: list[int]) -> list[int]:
            out = []
            for x in xs:
                out.append(x if not out else max(out[-1], x))
            return out
        ''',
        gen="return (ints(rng, rng.randint(0, 10), -20, 20),)",
    ),
    fn(
        "binary_search", 0.3,
        "`xs` is sorted ascending with distinct values. Return the index of `target` in `xs`, "
        "or -1 if it is absent.",
        examples=[(([1, 3, 5, 7], 5), 2), (([], 1), -1)],
        tests=[(([1, 3, 5, 7], 4), -1), (([2], 2), 0), (([-5, 0, 5], -5), 0), (([1, 2, 3, 4, 5, 6], 6), 5)],
        ref='''
        def binary_search(xs: list[int], target: int) -> int:
            lo, hi = 0, len(xs) - 1
            while lo <= hi:
                mid = (lo + hi) // 2
                if xs[mid] == target:
                    return mid
                if xs[mid] < target:
                    lo = mid + 1
                else:
                    hi = mid - 1
            return -1
        ''',
        gen='''
        xs = sorted(rng.sample(range(-50, 50), rng.randint(0, 12)))
        target = rng.choice(xs) if xs and rng.random() < 0.6 else rng.randint(-50, 50)
        return (xs, target)
        ''',
    ),
    fn(
        "merge_intervals", 0.5,
        "Merge the overlapping intervals `[start, end]` of `intervals` (intervals that touch, like "
        "`[1, 4]` and `[4, 5]`, overlap). Return the merged intervals sorted by start.",
        examples=[(([[1, 3], [2, 6], [8, 10], [15, 18]],), [[1, 6], [8, 10], [15, 18]]),
                  (([[1, 4], [4, 5]],), [[1, 5]])],
        tests=[(([],), []), (([[5, 6], [1, 2]],), [[1, 2], [5, 6]]), (([[1, 10], [2, 3], [4, 5]],), [[1, 10]]),
               (([[1, 2]],), [[1, 2]])],
        ref='''
        def merge_intervals(intervals: list[list[int]]) -> list[list[int]]:
            out = []
            for start, end in sorted(intervals):
                if out and start <= out[-1][1]:
                    out[-1][1] = max(out[-1][1], end)
                else:
                    out.append([start, end])
            return out
        ''',
        gen='''
        out = []
        for _ in range(rng.randint(0, 7)):
            start = rng.randint(0, 30)
            out.append([start, start + rng.randint(0, 6)])
        return (out,)
        ''',
    ),
    fn(
        "group_consecutive", 0.3,
        "Split `xs` into maximal runs where each element is exactly one more than the previous.",
        examples=[(([1, 2, 3, 5, 6, 8],), [[1, 2, 3], [5, 6], [8]]), (([],), [])],
        tests=[(([4],), [[4]]), (([3, 2, 1],), [[3], [2], [1]]), (([1, 3, 4, 5, 7],), [[1], [3, 4, 5], [7]])],
        ref='''
        def group_consecutive(xs: list[int]) -> list[list[int]]:
            out = []
            for x in xs:
                if out and x == out[-1][-1] + 1:
                    out[-1].append(x)
                else:
                    out.append([x])
            return out
        ''',
        gen='''
        xs = []
        x = rng.randint(-5, 5)
        for _ in range(rng.randint(0, 10)):
            xs.append(x)
            x += rng.choice([1, 1, 2, -1])
        return (xs,)
        ''',
    ),
    fn(
        "nearest_smaller_left", 0.5,
        "For every element of `xs`, return the nearest element to its left that is strictly "
        "smaller, or `None` if there is none.",
        examples=[(([4, 5, 2, 10, 8],), [None, 4, None, 2, 2]), (([],), [])],
        tests=[(([1, 2, 3],), [None, 1, 2]), (([3, 2, 1],), [None, None, None]),
               (([2, 2, 3],), [None, None, 2])],
        ref='''
        def nearest_smaller_left(xs: list[int]) -> list[int | None]:
            stack = []
            out = []
            for x in xs:
                while stack and stack[-1] >= x:
                    stack.pop()
                out.append(stack[-1] if stack else None)
                stack.append(x)
            return out
        ''',
        gen="return (ints(rng, rng.randint(0, 12), 0, 9),)",
    ),
    fn(
        "list_difference", 0.15,
        "Return the elements of `a` that do not occur in `b`, keeping their order and repeats.",
        examples=[(([1, 2, 2, 3], [2]), [1, 3]), (([], [1]), [])],
        tests=[(([1, 2], []), [1, 2]), (([5, 5, 6], [6]), [5, 5]), (([1], [1, 1]), [])],
        ref='''
        def list_difference(a: list[int], b: list[int]) -> list[int]:
            drop = set(b)
            return [x for x in a if x not in drop]
        ''',
        gen="return (ints(rng, rng.randint(0, 8), 0, 6), ints(rng, rng.randint(0, 4), 0, 6))",
    ),
    fn(
        "zip_lists", 0.1,
        "Return `[[a[0], b[0]], [a[1], b[1]], ...]`, stopping at the end of the shorter list.",
        examples=[(([1, 2, 3], ["a", "b"]), [[1, "a"], [2, "b"]]), (([], [1]), [])],
        tests=[(([1], [2]), [[1, 2]]), (([True, False], [0, 0]), [[True, 0], [False, 0]]),
               ((["x"], []), [])],
        ref='''
        def zip_lists(a: list, b: list) -> list[list]:
            return [[x, y] for x, y in zip(a, b)]
        ''',
        gen="return (ints(rng, rng.randint(0, 5)), words(rng, rng.randint(0, 5)))",
    ),
    fn(
        "sort_by_frequency", 0.45,
        "Sort `xs` by how often each value occurs, most frequent first; values with the same "
        "frequency in ascending order. Repeated values stay grouped together.",
        examples=[(([4, 6, 4, 2, 6, 4],), [4, 4, 4, 6, 6, 2]), (([],), [])],
        tests=[(([1, 2, 3],), [1, 2, 3]), (([3, 3, 1, 1, 2],), [1, 1, 3, 3, 2]), (([5],), [5])],
        ref='''
        def sort_by_frequency(xs: list[int]) -> list[int]:
            counts = {}
            for x in xs:
                counts[x] = counts.get(x, 0) + 1
            return sorted(xs, key=lambda x: (-counts[x], x))
        ''',
        gen="return (ints(rng, rng.randint(0, 12), 0, 5),)",
    ),
]
