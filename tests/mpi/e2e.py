#!/usr/bin/env python3
"""End-to-end tests of the real fabricmap binary under mpiexec; results read back with h5py.

usage: e2e.py --fabricmap BIN --mpiexec MPIEXEC --np N CASE
cases: sweep, emulated, bad-input, corrupt, rank-fault, show, pairwise-quick, pairwise-single, pair-window, copies,
       hang, frozen-rank, frozen-root, crash, kill-root, resume, training, predict, import, verify, inventory,
       ucx, history, accept, compare-logs, hostile-outputs, hostile-inputs, damaged,
       interrupted
The cases live in e2e_measure.py, e2e_faults.py, e2e_verdicts.py, e2e_history.py and e2e_hostile.py; their shared
checks and helpers in e2e_support.py.
"""
import argparse
import sys
import tempfile

import e2e_support
from e2e_faults import (case_crash, case_frozen_rank, case_frozen_root, case_hang, case_kill_root,
                        case_resume)
from e2e_history import case_history
from e2e_measure import (case_bad_input, case_copies, case_corrupt, case_emulated, case_inventory, case_pair_window,
                         case_pairwise_quick, case_pairwise_single, case_rank_fault, case_sweep, case_ucx)
from e2e_accept import case_accept
from e2e_hostile import case_damaged, case_hostile_inputs, case_hostile_outputs, case_interrupted
from e2e_storage import case_storage
from e2e_verdicts import case_compare_logs, case_import, case_predict, case_show, case_training, case_verify


CASES = {"sweep": case_sweep, "emulated": case_emulated, "bad-input": case_bad_input,
         "corrupt": case_corrupt, "show": case_show, "rank-fault": case_rank_fault,
         "pairwise-quick": case_pairwise_quick, "pairwise-single": case_pairwise_single,
         "pair-window": case_pair_window,
         "copies": case_copies, "hang": case_hang, "frozen-rank": case_frozen_rank,
         "frozen-root": case_frozen_root, "crash": case_crash, "kill-root": case_kill_root,
         "resume": case_resume, "training": case_training, "predict": case_predict,
         "import": case_import, "verify": case_verify, "inventory": case_inventory, "ucx": case_ucx,
         "storage": case_storage, "history": case_history, "accept": case_accept,
         "compare-logs": case_compare_logs, "hostile-outputs": case_hostile_outputs,
         "hostile-inputs": case_hostile_inputs, "damaged": case_damaged, "interrupted": case_interrupted}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fabricmap", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("case", choices=sorted(CASES))
    args = ap.parse_args()
    e2e_support.set_args(args)
    with tempfile.TemporaryDirectory(prefix="fabricmap-e2e-") as tmp:
        CASES[args.case](args, tmp)
    if e2e_support.FAILURES:
        print(f"{len(e2e_support.FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print(f"{args.case} (np={args.np}): ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
