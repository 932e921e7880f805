"""The equivalence table of the math verifier: (gold, boxed answer, equivalent?).

Each row is checked with the fast path on and off (tests/math/test_math_verify.py)
and scored by benchmarks/bench_math_verify.py against math-verify alone.
"""

# (category, gold, answer inside \boxed{}, expected verdict)
TABLE: list[tuple[str, str, str, bool]] = [
    # plain numbers: separators, zeros, currency, signs
    ("number", "42", "42", True),
    ("number", "1000", "1,000", True),
    ("number", "1000", "1{,}000", True),
    ("number", "1000", "1\\,000", True),
    ("number", "1000000", "1,000,000", True),
    ("number", "12.5", "12.50", True),
    ("number", "12", "12.0", True),
    ("number", "12", "012", True),
    ("number", "25", "\\$25", True),
    ("number", "25", "$25.00", True),
    ("number", "1200", "€1,200", True),
    ("number", "\\$1,000", "1000", True),
    ("number", "0", "-0", True),
    ("number", "100", "10^2", True),
    ("number", "6", "3!", True),
    ("number", "1000", "1,5", False),
    ("number", "12", "1 2", False),
    ("number", "5", "5.0000001", False),
    ("number", "1234567", "1234568", False),
    # negative numbers
    ("negative", "-5", "-5", True),
    ("negative", "-5", "\u22125", True),
    ("negative", "-5", "- 5", True),
    ("negative", "5", "+5", True),
    ("negative", "-5", "5", False),
    ("negative", "5", "-5", False),
    ("negative", "-\\frac{1}{2}", "-0.5", True),
    # fractions and decimals
    ("fraction", "\\frac{1}{2}", "0.5", True),
    ("fraction", "0.5", "\\frac{1}{2}", True),
    ("fraction", "1/2", "\\dfrac{1}{2}", True),
    ("fraction", "\\frac{3}{4}", "3/4", True),
    ("fraction", "\\frac{2}{4}", "\\frac12", True),
    ("fraction", "\\frac{1}{3}", "0.333333", False),  # exact: a truncated decimal is not 1/3 (lenient_decimals: yes)
    ("fraction", "\\frac{1}{3}", "0.33", False),
    ("fraction", "\\frac{3}{2}", "1\\frac{1}{2}", True),
    ("fraction", "0.1", "0.10", True),
    ("fraction", "0.1", "0.01", False),
    ("fraction", "\\frac{7}{12}", "\\frac{12}{7}", False),
    # percent
    ("percent", "25", "25\\%", True),
    ("percent", "0.25", "25\\%", True),
    ("percent", "25\\%", "25", True),
    ("percent", "25", "25 percent", True),
    ("percent", "25", "2.5\\%", False),
    # units and text wrappers
    ("units", "25", "25 \\text{ cm}", True),
    ("units", "12", "12 apples", True),
    ("units", "90", "90^\\circ", True),
    ("units", "90", "90°", True),
    ("units", "12", "\\text{12}", True),
    ("units", "18", "\\$18 \\text{ dollars}", True),
    ("units", "3.5", "3.5 \\mathrm{km}", True),
    ("units", "\\text{Monday}", "\\text{Monday}", True),
    ("units", "\\text{Monday}", "\\text{Tuesday}", False),
    # LaTeX variants
    ("latex", "\\sqrt{2}/2", "\\frac{\\sqrt{2}}{2}", True),
    ("latex", "\\sqrt{8}", "2\\sqrt{2}", True),
    ("latex", "\\frac{\\pi}{2}", "\\dfrac{\\pi}{2}", True),
    ("latex", "2\\pi", "2 \\pi", True),
    ("latex", "\\frac{1}{2}", "\\left(\\frac{1}{2}\\right)", True),
    ("latex", "e^{2}", "e^2", True),
    ("latex", "\\pi", "3.14", False),
    # sets and intervals
    ("set", "\\{1, 2\\}", "\\{2, 1\\}", True),
    ("set", "2, 3", "3, 2", True),
    ("set", "2, 3", "x=2 \\text{ or } x=3", True),
    ("set", "2, 3", "2", False),
    ("interval", "[1, 2)", "[1,2)", True),
    ("interval", "[1, 2)", "[1, 2]", False),
    ("interval", "(-\\infty, 2]", "(-\\infty,2]", True),
    ("interval", "x > 2", "(2, \\infty)", True),
    # tuples
    ("tuple", "(3, 1)", "(3, 1)", True),
    ("tuple", "(3, -1)", "x=3, y=-1", True),
    ("tuple", "(3, 1)", "(1, 3)", False),
    ("tuple", "(1, 2)", "(2, 1)", False),
    # equations
    ("equation", "x = 2", "2", True),
    ("equation", "2", "x = 2", True),
    ("equation", "y = 2x + 3", "y = 3 + 2x", True),
    ("equation", "y = 2x + 3", "y = 2x - 3", False),
    # expressions
    ("expression", "x^2 + 2x + 1", "(x+1)^2", True),
    ("expression", "x^{2} - x - 6", "(x - 3)(x + 2)", True),
    ("expression", "2x + 3", "3 + 2x", True),
    ("expression", "\\frac{x}{2}", "0.5x", True),
    ("expression", "2x + 3", "2x - 3", False),
    # matrices
    ("matrix", "\\begin{pmatrix}1 & 2\\\\3 & 4\\end{pmatrix}", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", True),
    ("matrix", "\\begin{pmatrix}1 & 2\\\\3 & 4\\end{pmatrix}", "\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}", True),
    ("matrix", "\\begin{pmatrix}1 & 2\\\\3 & 4\\end{pmatrix}", "\\begin{pmatrix}1&2\\\\4&3\\end{pmatrix}", False),
    # hedging inside one box: a list where one value is asked
    ("hedge", "5", "5, 7", False),
    ("hedge", "5", "5 \\text{ or } 7", False),
    ("hedge", "5", "\\pm 5", False),
    ("hedge", "3", "2 \\lor 3", False),
    ("hedge", "5", "2 \\quad 3", False),
    ("hedge", "2", "2; 3", False),
]
