"""The text units' first use from several threads at once (an eval scores in
worker threads): nltk and langdetect are imported on first use, and two
threads importing nltk together deadlocked on its module locks or saw a
half-initialised package, so 2 of 2,048 episodes of an eval lost their
reward to a ``reward_error``."""

from __future__ import annotations

import subprocess
import sys

# a fresh interpreter: nothing imported yet, every thread's call is a first use
SCRIPT = """
import threading
from gym_llm_instruct import text

calls = [text.sentences, text.word_tokens, text.detect_language] * 4
barrier = threading.Barrier(len(calls))
errors = []

def first_use(call):
    barrier.wait()
    try:
        call("Hello there. How are you today? I am writing a short note in English.")
    except BaseException as e:
        errors.append(f"{call.__name__}: {type(e).__name__}: {e}")

threads = [threading.Thread(target=first_use, args=(c,)) for c in calls]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("\\n".join(errors))
"""


def test_first_use_from_many_threads_at_once():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "", proc.stdout
