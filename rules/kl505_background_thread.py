"""KL505: the candidate starts threads or processes."""

from __future__ import annotations

import libcst as cst

from kernlint.eval.rulebase import CandidateModule, EvalRule, nodes_of
from kernlint.rule import Confirmation
from kernlint.eval.hack_vocabulary import KERNEL_PRELUDE

THREAD_CALLS = {
    "threading.Thread", "threading.Timer", "_thread.start_new_thread", "_thread.start_new",
    "concurrent.futures.ThreadPoolExecutor", "concurrent.futures.ProcessPoolExecutor",
    "concurrent.futures.thread.ThreadPoolExecutor", "multiprocessing.Process", "multiprocessing.Pool",
    "multiprocessing.pool.ThreadPool", "asyncio.to_thread", "os.fork", "torch.multiprocessing.spawn",
    "torch.multiprocessing.Process",
}


class BackgroundThread(EvalRule):
    code = "KL505"
    name = "background-thread"
    confirm = Confirmation(
        "eval",
        check="threading.active_count() around forward",
        threshold="> before",
        description="kernlint eval counts live threads before and after the candidate runs.",
    )
    summary = "The candidate starts a thread, thread pool or process."
    docs = """
## What it does
Flags `threading.Thread`, `ThreadPoolExecutor`, `multiprocessing.Process`, `os.fork` and
similar calls anywhere in the candidate module.

## Why is this bad?
Work deferred to a background thread runs after the timer stops (or races the correctness check);
forward returns an output that is filled in later. The measured time is not the kernel's.

## Example
```python
threading.Thread(target=launch, args=(x, out)).start()
return out
```

## Use instead
Do all work synchronously inside `forward`.
"""
    bad = (
        KERNEL_PRELUDE
        + '''import threading


def forward(x, out, launch):
    threading.Thread(target=launch, args=(x, out)).start()  # expect: KL505
    return out
''',
        '''from concurrent.futures import ThreadPoolExecutor

POOL = ThreadPoolExecutor(2)  # expect: KL505
''',
    )
    good = (
        '''import threading

LOCK = threading.Lock()
''',
    )

    def check(self, candidate: CandidateModule):
        module = candidate.module
        for call in nodes_of(module, cst.Call):
            name = self.name_of(module, call.func)
            if name in THREAD_CALLS:
                yield self.finding(candidate, call, f"{name} runs work outside the timed call", call=name)
