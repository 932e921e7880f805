"""The bundled problems, one module per topic (``TOPIC`` and ``PROBLEMS``).

Modules named ``fn_*`` hold Python function tasks, ``io_*`` stdin/stdout
tasks. Every expected output in ``examples`` and ``tests`` is written by hand;
the test suite checks each reference solution against them in the sandbox.
"""
