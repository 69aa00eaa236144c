"""End-to-end cases of what comes after a run: training patterns, show, predict, import, verify."""
import json
import math
import os
import shutil
import subprocess
import time

import h5py

from e2e_support import *  # noqa: F401,F403 (the checks and helpers every case uses)


def patterns(path):
    """The /patterns tables of a results file, as lists of dicts."""
    out = {}
    with h5py.File(path, "r") as f:
        for name in ("layout", "training", "scaling"):
            d = f["patterns/" + name][:] if "patterns/" + name in f else []
            out[name] = [{k: (text(row[k]) if d.dtype[k].kind == "O" else row[k].item()) for k in d.dtype.names}
                         for row in d]
        out["layout_text"] = text(f["patterns/layout"].attrs["layout"]) if "patterns/layout" in f else None
    return out


def check_training(path, layout, types, ops):
    """Every traffic type of the layout recorded alone and with the others, with positive figures;
    the concurrent rows carry their interference against the isolated ones."""
    pt = patterns(path)
    check(pt["layout_text"] == layout, f"layout {pt['layout_text']} != {layout}")
    check([r["rank"] for r in pt["layout"]] == list(range(8)), f"layout rows {pt['layout']}")
    rows = pt["training"]
    for mode in ("isolated", "concurrent"):
        got = sorted(r["traffic"] for r in rows if r["mode"] == mode)
        check(got == sorted(types), f"{layout} {mode} traffic {got}, expected {types}")
    for r in rows:
        check(r["time_us_median"] > 0 and r["busbw"] > 0 and r["messages"] > 0 and math.isfinite(r["busbw"]),
              f"{layout} row {r}")
        check(r["ops"] == ops.get(r["traffic"], r["ops"]), f"{layout} {r['traffic']} ops {r['ops']}")
        if r["mode"] == "concurrent":
            alone = [a for a in rows if a["mode"] == "isolated" and a["traffic"] == r["traffic"]][0]
            check(abs(r["interference"] - r["time_us_median"] / alone["time_us_median"]) < 1e-9,
                  f"interference {r['interference']} of {r['traffic']}")
        else:
            check(math.isnan(r["interference"]), f"isolated row with interference {r}")
    return pt


def case_training(args, tmp):
    """The training pattern on 8 ranks in 2 emulated nodes of 4 (tp=2,pp=2,dp=2 with the scaling
    sweep; tp=4,dp=2 with sequence parallelism and ZeRO), a TP group across nodes (a warning, or
    a refusal with --strict-layout), bad layouts, and a run stopped in the pattern and resumed."""
    base = ["--ranks-per-node", "4", "--seq-len", "128", "--hidden", "256", "--train-iters", "4",
            "--step-timeout", "60", "--progress", "off"]
    # with a small sweep of the ops the layout uses, for predict's curves
    full = ["run", "--patterns", "collectives,training", "--layout", "tp=2,pp=2,dp=2", "--scaling", "--scaling-bytes",
            "1M", "-n", "5", "-w", "1", "--ops", "all_reduce,sendrecv", "--scopes", "intra,inter", "--out-of-place",
            "-b", "16K", "-e", "1M", "-f", "4"]
    first = os.path.join(tmp, "t3d.h5")
    p = mpirun(args, 8, [args.fabricmap] + full + ["-o", first] + base, timeout=180)
    check(p.returncode == 0, f"tp=2,pp=2,dp=2: exit {p.returncode}: {p.stderr[-600:]}")
    check("training pattern, layout tp=2,pp=2,dp=2,ep=1" in p.stdout and "interference" in p.stdout,
          f"console: {p.stdout[-1500:]}")
    pt = check_training(first, "tp=2,pp=2,dp=2,ep=1", ["tp", "pp", "dp"], {"tp": "all_reduce", "pp": "sendrecv"})
    # messages: activations 1 x 128 x 256 x 2 B; gradients 12 x 256^2 x 2 layers x 2 B / tp 2, one bucket
    sizes = {r["traffic"]: (r["bytes"], r["messages"], r["nranks"], r["groups"]) for r in pt["training"]}
    check(sizes == {"tp": (65536, 8, 2, 4), "pp": (65536, 2, 2, 4), "dp": (1572864, 1, 2, 4)}, f"sizes {sizes}")
    scaling = pt["scaling"]
    check([(r["level"], r["n"], r["groups"], r["nranks"]) for r in scaling] ==
          [("gpus", 2, 2, 2), ("gpus", 4, 2, 4), ("nodes", 1, 1, 4), ("nodes", 2, 1, 8)], f"scaling {scaling}")
    check(all(r["busbw"] > 0 and r["wrong"] == 0 for r in scaling), f"scaling figures {scaling}")
    check(scaling[0]["efficiency"] == 1.0 and scaling[2]["efficiency"] == 1.0, "a level's smallest point is its baseline")
    check(abs(scaling[1]["efficiency"] - scaling[1]["busbw"] / scaling[0]["busbw"]) < 1e-9, "efficiency")
    attrs, t = read(first)
    kinds = [s["kind"] for s in t["steps"]]
    check(attrs["complete"] == True and kinds == ["collective"] * 16 + ["scaling"] * 4 + ["training"] * 4,
          f"steps {kinds}")
    # predict prices every traffic type of the layout on the file's curves, with the concurrent
    # pattern's interference: a complete JSON
    pr = subprocess.run([args.fabricmap, "predict", first, "--params", "20M", "--layers", "4", "--hidden", "256",
                         "--seq", "128", "--global-batch", "8", "--layout", "tp=2,pp=2,dp=2", "--bucket-bytes", "512K",
                         "--peak-tflops", "50", "--price-per-gpu-hour", "2", "--json"],
                        capture_output=True, text=True, timeout=60)
    check(pr.returncode == 0, f"predict: exit {pr.returncode}: {pr.stderr[-600:]}")
    doc = json.loads(pr.stdout) if pr.returncode == 0 else {"predictions": [{"traffic": []}]}
    prediction = doc["predictions"][0]
    measured = {r["traffic"]: r["interference"] for r in pt["training"] if r["mode"] == "concurrent"}
    for t in prediction["traffic"]:
        if t["type"] in ("tp", "pp", "dp"):
            check(t["status"] == "ok" and t["exposed_seconds"] > 0 and all(l["busbw_gbs"] > 0 for l in t["legs"]),
                  f"predict {t['type']}: {t}")
            check(t["interference"] is not None and math.isclose(t["interference"], measured[t["type"]], rel_tol=1e-9),
                  f"predict {t['type']} interference {t['interference']} vs measured {measured.get(t['type'])}")
        else:
            check(t["status"] == "none", f"predict {t['type']}: {t['status']}")
    for key in ("compute_seconds", "step_seconds", "gpu_utilization", "tokens_per_second", "days", "gpu_hours", "cost"):
        check(isinstance(prediction.get(key), (int, float)) and prediction[key] > 0, f"predict {key}: {prediction.get(key)}")
    check(prediction.get("unknown_reason") == "", f"predict unknown: {prediction.get('unknown_reason')}")
    shown = subprocess.run([args.fabricmap, "show", first], capture_output=True, text=True, timeout=60)
    check(shown.returncode == 0 and "concurrent" in shown.stdout and "efficiency" in shown.stdout,
          f"show: {shown.stdout[-800:]}")

    second = os.path.join(tmp, "t2d.h5")
    p = mpirun(args, 8, [args.fabricmap, "run", "--patterns", "training", "--layout", "tp=4,dp=2", "--sequence-parallel",
                         "--dp-mode", "zero", "-o", second] + base, timeout=180)
    check(p.returncode == 0, f"tp=4,dp=2: exit {p.returncode}: {p.stderr[-600:]}")
    check_training(second, "tp=4,pp=1,dp=2,ep=1", ["tp", "dp"],
                   {"tp": "all_gather+reduce_scatter", "dp": "reduce_scatter+all_gather"})
    check(not [f for f in read(second)[1]["findings"] if f["kind"] == "layout"], "tp=4 inside nodes got a layout finding")

    # TP across the two nodes: measured with a warning; refused when strict
    wide = os.path.join(tmp, "wide.h5")
    p = mpirun(args, 8, [args.fabricmap, "run", "--patterns", "training", "--layout", "tp=8", "-o", wide] + base,
               timeout=180)
    check(p.returncode == 0, f"tp=8: exit {p.returncode}: {p.stderr[-600:]}")
    layout_findings = [f for f in read(wide)[1]["findings"] if f["kind"] == "layout"]
    check(len(layout_findings) == 1 and layout_findings[0]["severity"] == "warning" and
          "ranks 0-7" in layout_findings[0]["message"], f"layout findings {layout_findings}")
    for extra, expected in ((["--layout", "tp=8", "--strict-layout"], "strict-layout"),
                            (["--layout", "tp=3,dp=2"], "the job has 8 ranks"),
                            (["--layout", "tp=2,dp=4,ep=3"], "does not divide"),
                            (["--layout", "tp=2,dp=x"], "positive integer")):
        bad = os.path.join(tmp, "bad.h5")
        p = mpirun(args, 8, [args.fabricmap, "run", "--patterns", "training", "-o", bad] + base + extra, timeout=60)
        ok, lines = one_error_line(p)
        check(p.returncode == 2 and ok and expected in lines[0] and not os.path.exists(bad),
              f"{extra}: exit {p.returncode} {lines}")

    # stopped in the concurrent step, resumed: the same step list as a clean run
    stopped = os.path.join(tmp, "stopped.h5")
    clean_steps = step_list(first)[1]
    concurrent = [st[0] for st in clean_steps if st[1] == "training" and st[2] == "concurrent"][0]
    p = mpirun(args, 8, [args.fabricmap] + full + base[:-4] + ["--step-timeout", str(TIMEOUT), "--inject-fault",
                                                               f"stall:rank=5:step={concurrent}", "-o", stopped],
               timeout=120)
    check(p.returncode == 3, f"stalled run: exit {p.returncode}: {p.stderr[-600:]}")
    check(len(step_list(stopped)[1]) == concurrent, f"stalled run kept {step_list(stopped)[1]}")
    p = mpirun(args, 8, [args.fabricmap, "run", "--resume", stopped], timeout=180)
    check(p.returncode == 0, f"resume: exit {p.returncode}: {p.stderr[-600:]}")
    resumed = step_list(stopped)[1]
    check([st[:-1] for st in resumed] == [st[:-1] for st in clean_steps],
          f"resumed steps differ from a clean run's:\n{resumed}\n{clean_steps}")
    check(len([r for r in patterns(stopped)["training"] if r["mode"] == "concurrent"]) == 3,
          "the resumed concurrent step is missing rows")


def case_show(args, tmp):
    notes = os.path.join(tmp, "notes.txt")
    with open(notes, "w") as f:
        f.write("not an hdf5 file\n")
    for target in (notes, os.path.join(tmp, "absent.h5")):
        p = subprocess.run([args.fabricmap, "show", target], capture_output=True, text=True, timeout=30)
        ok, lines = one_error_line(p)
        check(p.returncode == 2 and ok, f"show {target}: {p.returncode} {lines}")
    # a damaged file on which libhdf5 itself loops forever: the reader's CPU-time guard ends it
    damaged = os.path.join(os.path.dirname(__file__), "..", "data", "damaged", "hdf5-heap-loop.h5")
    start = time.monotonic()
    p = subprocess.run([args.fabricmap, "show", damaged], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, FABRICMAP_READ_CPU_LIMIT="2"))
    elapsed = time.monotonic() - start
    ok, lines = one_error_line(p)
    check(p.returncode == 2 and ok and "did not finish after 2 s of CPU time" in lines[0] and elapsed < 15,
          f"show of a file libhdf5 loops on: exit {p.returncode} after {elapsed:.1f}s: {lines}")


def case_predict(args, tmp):
    """`predict` on a file this run measures: scopes chosen, figures sourced, unknowns explained."""
    out = os.path.join(tmp, "measured.h5")
    p = mpirun(args, args.np,
               [args.fabricmap, "run", "--ranks-per-node", "2", "--collectives", "--ops", "all_reduce,sendrecv",
                "-b", "4M", "-e", "32M", "-f", "2", "-n", "3", "-w", "1", "--progress", "off", "-o", out])
    check(p.returncode == 0, f"run exit {p.returncode}: {p.stderr}")

    def predict(*extra):
        return subprocess.run([args.fabricmap, "predict", out] + list(extra), capture_output=True, text=True,
                              timeout=60)

    base = ["--model", "llama-7b", "--layout", "tp=2,pp=2,dp=2", "--global-batch", "64", "--peak-tflops", "989",
            "--price-per-gpu-hour", "2.5"]
    j = predict(*base, "--json")
    check(j.returncode == 0, f"predict --json exit {j.returncode}: {j.stderr}")
    doc = json.loads(j.stdout) if j.returncode == 0 else {"predictions": [{}]}
    pr = doc["predictions"][0]
    traffic = {t["type"]: t for t in pr.get("traffic", [])}
    # nodes of 2 ranks: TP pairs {0,1} inside a node, PP {0,2} and DP {0,4} one rank per node
    for kind, scope, op in (("tp", "intra", "all_reduce"), ("pp", "inter", "sendrecv"), ("dp", "inter", "all_reduce")):
        t = traffic.get(kind, {})
        check(t.get("status") == "ok" and t.get("scope") == scope, f"predict {kind}: {t}")
        leg = (t.get("legs") or [{}])[0]
        check(leg.get("op") == op and leg.get("busbw_gbs", 0) > 0 and out in leg.get("source", ""),
              f"predict {kind} leg {leg}")
    check(traffic.get("tp", {}).get("legs", [{}])[0].get("bytes_per_message") == 32 << 20, "tp message 32 MiB")
    check(traffic.get("ep", {}).get("status") == "none", "dense model has no ep traffic")
    exposed = sum(t["exposed_seconds"] for t in traffic.values() if t["status"] == "ok")
    # pp=2: the 1F1B bubble is compute x (pp - 1) / micro-batches per step
    cfg = doc["config"]
    check(math.isclose(pr.get("bubble_seconds", -1), pr["compute_seconds"] * (cfg["layout"]["pp"] - 1)
                       / (cfg["micro_batches_per_step"] * cfg["virtual_stages"]), rel_tol=1e-9),
          f"bubble {pr.get('bubble_seconds')} of compute {pr['compute_seconds']}")
    check(pr.get("step_seconds") is not None
          and math.isclose(pr["step_seconds"], pr["compute_seconds"] + pr["bubble_seconds"] + exposed, rel_tol=1e-9),
          f"step = compute + bubble + exposed: {pr.get('step_seconds')}")
    check(pr.get("cost") is not None and math.isclose(pr["cost"], 2.5 * pr["gpu_hours"], rel_tol=1e-9), "cost")
    text_run = predict(*base)
    check(text_run.returncode == 0 and "interpolated (log-log)" in text_run.stdout and "pipeline bubble" in text_run.stdout
          and "#   step MFU " in text_run.stdout and "#   compute share " in text_run.stdout
          and "GPU utilization" not in text_run.stdout, f"predict text: {text_run.stdout}")
    # a host-memory run records no GPU memory: the layout's memory is computed, not checked
    check(pr.get("fits_memory", 0) is None and pr.get("memory_bytes", {}).get("total", 0) > 0
          and "not checked" in text_run.stdout, f"predict memory on a host run: {pr.get('fits_memory', 'absent')}")
    check(math.isclose(pr.get("compute_share", -1), pr["gpu_utilization"])
          and math.isclose(pr["step_mfu"], pr["compute_share"] * cfg["mfu"], rel_tol=1e-9), "step MFU = share x mfu")
    # two providers side by side
    both = subprocess.run([args.fabricmap, "predict", out, out] + base, capture_output=True, text=True, timeout=60)
    check(both.returncode == 0 and both.stdout.count(out) >= 3 and "step time s" in both.stdout,
          f"side by side: {both.stdout}")
    # what the file did not measure is unknown with the reason, never guessed
    moe = predict("--model", "mixtral-8x7b", "--layout", "tp=2,dp=2,ep=2", "--global-batch", "64",
                  "--peak-tflops", "989", "--json")
    check(moe.returncode == 0, f"mixtral exit {moe.returncode}: {moe.stderr}")
    if moe.returncode == 0:
        m = json.loads(moe.stdout)["predictions"][0]
        ep = [t for t in m["traffic"] if t["type"] == "ep"][0]
        check(ep["status"] == "unknown" and "alltoall not measured" in ep["reason"], f"ep: {ep}")
        check(m["step_seconds"] is None and "step time unknown" in m["unknown_reason"], "mixtral step unknown")
    # bad input: one message, exit 2
    for extra in (base[:-4] + [],  # a host-memory file records no GPU: --peak-tflops is needed
                  ["--model", "llama-8b", "--dp", "2", "--peak-tflops", "989"],
                  ["--model", "llama-7b", "--dp", "3", "--peak-tflops", "989"],
                  base + ["--virtual-stages", "3"]):  # 32 layers do not split into 2 x 3 chunks
        bad = predict(*extra)
        ok, lines = one_error_line(bad)
        check(bad.returncode == 2 and ok, f"predict {extra}: exit {bad.returncode} {lines}")
    missing = subprocess.run([args.fabricmap, "predict", os.path.join(tmp, "absent.h5")] + base,
                             capture_output=True, text=True, timeout=60)
    ok, lines = one_error_line(missing)
    check(missing.returncode == 2 and ok, f"predict of a missing file: exit {missing.returncode} {lines}")
    check_advise(args, out)
    check_advice_on_logs(args, tmp)


def check_advise(args, out):
    """`advise` on the same file: layouts that fit the declared memory, fastest first, priced on the
    file's curves (the layouts whose traffic it did not measure left unpriced, below them)."""
    def advise(*extra):
        return subprocess.run([args.fabricmap, "advise", out] + list(extra), capture_output=True, text=True, timeout=60)

    base = ["--model", "llama-7b", "--global-batch", "64", "--peak-tflops", "989", "--gpu-memory", "80G"]
    j = advise(*base, "--json")
    check(j.returncode == 0, f"advise --json exit {j.returncode}: {j.stderr}")
    doc = json.loads(j.stdout) if j.returncode == 0 else {"files": [{"layouts": []}]}
    f = doc["files"][0]
    check(f.get("gpus") == args.np and f.get("gpus_per_node") == 2 and f.get("gpu_memory_bytes") == 80 << 30,
          f"advise file: {dict((k, f.get(k)) for k in ('gpus', 'gpus_per_node', 'gpu_memory_bytes'))}")
    layouts = f["layouts"]
    steps = [x["step_seconds"] for x in layouts if x["step_seconds"] is not None]
    check(layouts and steps and steps == sorted(steps) and layouts[0]["step_seconds"] is not None,
          f"advise layouts not fastest first: {steps}")
    for x in layouts:
        lay = x["layout"]
        check(lay["tp"] * lay["pp"] * lay["dp"] == args.np and lay["tp"] <= 2, f"advise layout {lay}")
        check(x["memory_bytes"]["total"] <= 80 << 30, f"advise kept a layout that does not fit: {x['memory_bytes']}")
    check("--tensor-model-parallel-size" in layouts[0]["flags"], f"flags {layouts[0]['flags']}")
    text = advise(*base)
    check(text.returncode == 0 and "# megatron for #1: --tensor-model-parallel-size" in text.stdout,
          f"advise text: {text.stdout}")
    small = advise("--model", "gpt3-175b", "--peak-tflops", "989", "--gpu-memory", "16G")
    check(small.returncode == 0 and "# does not fit: no layout fits" in small.stdout, f"advise gpt3: {small.stdout}")
    bad = advise("--model", "llama-7b", "--peak-tflops", "989")  # a host-memory run records no GPU memory
    ok, lines = one_error_line(bad)
    check(bad.returncode == 2 and ok and "--gpu-memory" in lines[0], f"advise without GPU memory: {bad.returncode} {lines}")
    check_report_advice(args, out, base, layouts[0])


def check_advice_on_logs(args, tmp):
    """A capacity planner's case: providers' nccl-tests logs of all_reduce only, imported. One A100
    server (40 GiB from its GPU names) is judged as its inside; what does not fit is flagged; only
    what the file can price is ranked, and what it cannot is said, with what to measure."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "nccl-tests")
    a100 = os.path.join(tmp, "a100-log.h5")
    gh200 = os.path.join(tmp, "gh200-log.h5")

    def fm(*argv):
        return subprocess.run([args.fabricmap] + list(argv), capture_output=True, text=True, timeout=120)

    for log, out in (("a100-sxm4-8gpu-allreduce-superbench-testdata.txt", a100),
                     ("gh200-2node-8gpu-allreduce-slingshot-cscs-alps.txt", gh200)):
        p = fm("import", "nccl-tests", os.path.join(data, log), "-o", out, "--force")
        check(p.returncode == 0, f"import {log}: exit {p.returncode} {p.stderr}")
    llama = ["--model", "llama-7b", "--global-batch", "64"]

    # predict on the one server: tensor parallelism priced on its world rows, memory checked (fits)
    p = fm("predict", a100, *llama, "--tp", "8", "--json")
    pr = json.loads(p.stdout)["predictions"][0] if p.returncode == 0 else {}
    tp = (pr.get("traffic") or [{}])[0]
    check(p.returncode == 0 and tp.get("status") == "ok"
          and "one node: its world scope is the node's inside" in tp["legs"][0]["source"],
          f"predict a100 tp: {p.returncode} {p.stderr} {tp}")
    check(pr.get("gpu_memory_bytes") == 40 << 30 and pr.get("fits_memory") is True
          and "GPU name" in pr.get("gpu_memory_source", ""), f"predict a100 memory: {pr.get('gpu_memory_source')}")
    check(math.isclose(pr.get("step_mfu", -1), pr.get("compute_share", 0) * 0.4, rel_tol=1e-9),
          f"step MFU {pr.get('step_mfu')} of share {pr.get('compute_share')}")
    full = fm("predict", a100, *llama, "--tp", "8", "--recompute", "full", "--json")
    fr = json.loads(full.stdout)["predictions"][0] if full.returncode == 0 else {}
    check(full.returncode == 0 and fr["memory_bytes"]["total"] < pr["memory_bytes"]["total"]
          and math.isclose(fr["compute_seconds"], pr["compute_seconds"] * 4 / 3, rel_tol=1e-9),
          "--recompute full: less memory, 4/3 the compute")
    # GPT-3 as pure data parallelism on 8 x 40 GiB: priced, but flagged as not fitting; never silent
    p = fm("predict", a100, "--model", "gpt3-175b", "--dp", "8", "--price-per-gpu-hour", "2")
    lines = p.stdout.splitlines()
    check(p.returncode == 0 and any(l.startswith("# DOES NOT FIT: needs ") and "GiB per GPU of 40.0 GiB" in l
                                    for l in lines)
          and any("days" in l and "(NOT ACHIEVABLE" in l for l in lines), f"predict gpt3 dp=8: {p.stdout}")
    check("--ops all_gather,reduce_scatter or import those nccl-tests logs" in p.stdout,
          "predict names what sequence parallelism and ZeRO need")
    j = fm("predict", a100, "--model", "gpt3-175b", "--dp", "8", "--json")
    jr = json.loads(j.stdout)["predictions"][0] if j.returncode == 0 else {}
    check(jr.get("fits_memory") is False and jr.get("does_not_fit", "").startswith("DOES NOT FIT"),
          f"predict gpt3 --json: {jr.get('fits_memory')} {jr.get('does_not_fit')}")
    # two nodes of GH200 (the name counts the CPU's memory: none known): data parallelism across the
    # nodes priced on the world rows, memory not checked
    p = fm("predict", gh200, *llama, "--dp", "8", "--json")
    gr = json.loads(p.stdout)["predictions"][0] if p.returncode == 0 else {}
    check(p.returncode == 0 and gr["fits_memory"] is None and gr["traffic"][2]["status"] == "ok"
          and gr["traffic"][2]["scope"] == "world", f"predict gh200: {p.returncode} {p.stderr}")

    # advise on the one server: ranked among what all_reduce prices, and says what the rest needs
    a = fm("advise", a100, *llama)
    check(a.returncode == 0 and "#  1 " not in a.stdout and "\n   1 tp=" in a.stdout
          and "# megatron for #1: --tensor-model-parallel-size" in a.stdout
          and "# searched without sequence parallelism and ZeRO" in a.stdout
          and "# to price more: sequence parallelism and ZeRO" in a.stdout, f"advise a100: {a.stdout}{a.stderr}")
    j = fm("advise", a100, *llama, "--json")
    f = json.loads(j.stdout)["files"][0] if j.returncode == 0 else {"layouts": []}
    ranked = [x for x in f["layouts"] if x["rank"] is not None]
    check(ranked and [x["rank"] for x in ranked] == list(range(1, len(ranked) + 1))
          and all(not x["sequence_parallel"] and x["zero_stage"] == 0 and x["step_seconds"] for x in ranked)
          and all(x["step_seconds"] is None for x in f["layouts"] if x["rank"] is None)
          and f.get("options_unmeasured", 0) > 0 and f.get("gpu_memory_bytes") == 40 << 30,
          f"advise a100 --json: {f.get('layouts')[:2]}")
    # GPT-3 on 1024 GPUs from one server's log: nothing priced, said plainly, no #1
    a = fm("advise", a100, "--model", "gpt3-175b", "--gpus", "1024")
    check(a.returncode == 0 and "# no layout priced: none of the" in a.stdout and "#1" not in a.stdout
          and "fits by memory only (unranked" in a.stdout and "groups across nodes need curves measured across nodes"
          in a.stdout and "pipeline parallelism needs sendrecv curves" in a.stdout, f"advise gpt3 1024: {a.stdout}")
    j = fm("advise", a100, "--model", "gpt3-175b", "--gpus", "1024", "--json")
    f = json.loads(j.stdout)["files"][0] if j.returncode == 0 else {}
    check(f.get("ranked") == 0 and f.get("nothing_priced", "").startswith("no layout priced")
          and f.get("layouts") and all(x["rank"] is None for x in f["layouts"]), f"advise gpt3 1024 --json: {f}")
    # the GH200 log tells no GPU memory: declared, or refused with the way out
    bad = fm("advise", gh200, *llama)
    ok, lines = one_error_line(bad)
    check(bad.returncode == 2 and ok and "--gpu-memory" in lines[0], f"advise gh200 without memory: {lines}")
    small = ["--params", "1.3B", "--layers", "24", "--hidden", "2048", "--heads", "16", "--global-batch", "64"]
    a = fm("advise", gh200, *small, "--gpu-memory", "96G", "--json")
    f = json.loads(a.stdout)["files"][0] if a.returncode == 0 else {"layouts": [{}]}
    first = f["layouts"][0]
    check(a.returncode == 0 and first.get("rank") == 1 and first["layout"] == {"tp": 1, "pp": 1, "dp": 8, "ep": 1}
          and any("tp: intra all_reduce not measured" in w for w in f["why_unpriced"]),
          f"advise gh200: {a.returncode} {a.stderr} {first} {f.get('why_unpriced')}")


def check_report_advice(args, out, base, first):
    """`report --model ...`: the page gains the advice section, the same first layout and flags as
    advise; a file without what advise needs still gets its report, the section saying why."""
    html = out + ".advice.html"
    r = subprocess.run([args.fabricmap, "report", out, "-o", html] + base, capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"report --model exit {r.returncode}: {r.stderr}")
    page = open(html, encoding="utf-8").read() if r.returncode == 0 else ""
    at = page.find('<section id="advice"><h2>Advice: llama-7b</h2>')
    lay = first["layout"]
    layout = f"tp={lay['tp']},pp={lay['pp']},dp={lay['dp']},ep={lay['ep']}"
    check(at > 0 and page.find(f"<td>{layout}</td>", at) > at and page.find(f"<pre>{first['flags']}</pre>", at) > at,
          f"report advice section: {page[at:at + 2000] if at > 0 else 'missing'}")
    check(at < page.find('id="provenance"') and '<a href="#advice">' in page, "advice section not before provenance")
    # the page is written again: an existing output is replaced only with --force
    r = subprocess.run([args.fabricmap, "report", out, "-o", html, "--model", "llama-7b"], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 2 and "exists: pass --force to replace it" in r.stderr, f"report over a page: {r.stderr}")
    r = subprocess.run([args.fabricmap, "report", out, "-o", html, "--force", "--model", "llama-7b"],
                       capture_output=True, text=True, timeout=60)
    page = open(html, encoding="utf-8").read() if r.returncode == 0 else ""
    check(r.returncode == 0 and "No advice: " in page and "--gpu-memory" in r.stderr,
          f"report without GPU memory: {r.returncode} {r.stderr}")
    r = subprocess.run([args.fabricmap, "report", out, "-o", html, "--force", "--model", "no-such-model"],
                       capture_output=True, text=True, timeout=60)
    ok, lines = one_error_line(r)
    check(r.returncode == 2 and ok and "no-such-model" in lines[0], f"report --model unknown: {r.returncode} {lines}")


def case_import(args, tmp):
    """`import nccl-tests` on the real logs of tests/data/nccl-tests: the file holds the figures as
    printed, says where they came from, and show prints them; bad input is one message and exit 2."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "nccl-tests")
    gh200 = os.path.join(data, "gh200-2node-8gpu-allreduce-slingshot-cscs-alps.txt")
    a100 = os.path.join(data, "a100-sxm4-8gpu-allreduce-superbench-testdata.txt")

    def run(*argv):
        return subprocess.run([args.fabricmap] + list(argv), capture_output=True, text=True, timeout=60)

    # two logs of the same ranks: an all_reduce and an all_gather (the same log, other binary)
    with open(gh200) as f:
        log_text = f.read()
    gather = os.path.join(tmp, "gh200-all-gather.log")
    with open(gather, "w") as f:
        f.write("".join("[1,0]<stdout>:" + l + "\r\n"
                        for l in log_text.replace("all_reduce_perf", "all_gather_perf").splitlines()))
    out = os.path.join(tmp, "imported.h5")
    p = run("import", "nccl-tests", gh200, gather, "-o", out)
    check(p.returncode == 0, f"import exit {p.returncode}: {p.stderr}")
    attrs, t = read(out)
    check(text(attrs["backend"]) == "nccl-tests (imported)", f"backend {attrs['backend']}")
    check(json.loads(text(attrs["imported_from"])) == [gh200, gather], f"imported_from {attrs['imported_from']}")
    check(bool(attrs["complete"]) and attrs["planned_steps"] == 100 and len(t["steps"]) == 100,
          f"complete {attrs['complete']}, {len(t['steps'])} steps of {attrs['planned_steps']}")
    check([s["step"] for s in t["steps"]] == list(range(100)), "steps numbered in order")
    check([r["hostname"] for r in t["topology/ranks"]] == ["nid005471"] * 4 + ["nid005487"] * 4, "rank hosts")
    check([n["ranks"] for n in t["topology/nodes"]] == [4, 4], "nodes")
    rows = t["collectives"]
    check(len(rows) == 100 and {r["op"] for r in rows[:50]} == {"all_reduce"}
          and {r["op"] for r in rows[50:]} == {"all_gather"}, "ops of the rows")
    last = rows[49]
    check(last["bytes"] == 134217728 and last["in_place"] and last["busbw"] == 123.11
          and last["time_us_mean"] == 1907.8 and last["time_us_median"] == 1907.8 and math.isnan(last["time_us_min"])
          and last["nranks"] == 8 and last["ranks"] == "0-7" and last["checked"] and last["wrong"] == 0,
          f"last all_reduce row {last}")
    check(max(r["busbw"] for r in rows[:50] if not r["in_place"]) == 122.57, "peak out-of-place busbw")
    with h5py.File(out, "r") as f:
        imported = f["imported"][:]
    check(len(imported) == 2, f"{len(imported)} /imported rows")
    for row, name in zip(imported, (gh200, gather)):
        check(text(row["file"]) == name and text(row["avg_bus_bandwidth_line"]) == "# Avg bus bandwidth    : 19.7866"
              and row["avg_bus_bandwidth"] == 19.7866 and text(row["out_of_bounds"]) == "0 OK",
              f"/imported row {row}")
    j = run("show", "--json", out)
    doc = json.loads(j.stdout) if j.returncode == 0 else {}
    check(j.returncode == 0 and [i["file"] for i in doc.get("imported", [])] == [gh200, gather]
          and doc["provenance"]["imported_from"] == [gh200, gather] and len(doc["collectives"]) == 100,
          f"show --json: {j.returncode} {j.stderr}")
    s = run("show", out)
    check(s.returncode == 0 and f"# imported from nccl-tests: {gh200}, {gather}" in s.stdout
          and s.stdout.count("# Avg bus bandwidth    : 19.7866") == 2, f"show: {s.stdout[:600]}")
    # the old table layout (no root column, error N/A) imports as well
    old = os.path.join(tmp, "a100.h5")
    p = run("import", "nccl-tests", a100, "-o", old)
    check(p.returncode == 0, f"import a100 exit {p.returncode}: {p.stderr}")
    if p.returncode == 0:
        attrs, t = read(old)
        check(len(t["collectives"]) == 68 and max(r["busbw"] for r in t["collectives"]) == 235.26
              and all(not r["checked"] and r["root"] == -1 for r in t["collectives"])
              and {s["status"] for s in t["steps"]} == {"unchecked"}, "a100 rows")
    # bad input: exit 2, one message naming the file (and line), no file written
    garbage = os.path.join(tmp, "garbage.log")
    with open(garbage, "w") as f:
        f.write(log_text.replace("    17.65    0.00", "    17.65    zero"))
    empty = os.path.join(tmp, "empty.log")
    open(empty, "w").close()
    bad_out = os.path.join(tmp, "bad.h5")
    for argv, want in (([garbage], garbage + ":18: "), ([empty], empty + ": no nccl-tests result table"),
                       ([os.path.join(tmp, "absent.log")], "absent.log': No such file"),
                       ([gh200, a100], "were measured on different ranks")):
        p = run("import", "nccl-tests", *argv, "-o", bad_out)
        ok, lines = one_error_line(p)
        check(p.returncode == 2 and ok and want in lines[0], f"import {argv}: exit {p.returncode} {lines}")
        check(not os.path.exists(bad_out), f"import {argv} left {bad_out}")
    p = run("import", "nccl-tests", gh200, "-o", out)
    ok, lines = one_error_line(p)
    check(p.returncode == 2 and ok and "--force" in lines[0], f"import over a file: {p.returncode} {lines}")
    check(run("import", "nccl-tests", gh200, "-o", out, "--force").returncode == 0, "import --force")


PROFILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "profiles")


def case_verify(args, tmp):
    """`verify` on a measured file: a custom profile it passes (0) and one it fails (1, the check named),
    a built-in GPU profile (1: NO_GPU), unusable input (2); `compare` of runs with different rank counts."""
    big = os.path.join(tmp, "big.h5")
    small = os.path.join(tmp, "small.h5")
    measure = ["--ranks-per-node", "2", "--collectives", "--ops", "all_reduce", "-b", "256K", "-e", "4M", "-f", "2",
               "-n", "3", "-w", "1", "--pairwise", "--scaling", "--progress", "off"]
    for path, np_ in ((big, args.np), (small, 2)):
        p = mpirun(args, np_, [args.fabricmap, "run"] + measure + ["-o", path])
        check(p.returncode == 0, f"run np {np_} exit {p.returncode}: {p.stderr}")

    def fm(*extra):
        return subprocess.run([args.fabricmap] + list(extra), capture_output=True, text=True, timeout=60)

    # nodes of 2 ranks have one scaling point: nothing to scale against, so that check is missing
    # (NOT JUDGED, exit 1) and --allow-missing passes on the rest
    strict = fm("verify", big, "--profile", "custom", "--profile-file", os.path.join(PROFILES, "host-pass.txt"), "--json")
    doc = json.loads(strict.stdout) if strict.stdout.strip() else {"checks": []}
    scaling = [c for c in doc["checks"] if c["check"] == "scaling_efficiency"]
    check(strict.returncode == 1 and doc.get("verdict") == "not_judged" and doc.get("missing") == 1
          and scaling and scaling[0]["status"] == "missing" and "one point only" in scaling[0]["detail"],
          f"verify host-pass on 2-rank nodes: exit {strict.returncode}, {doc.get('verdict')}, {scaling}")
    passing = fm("verify", big, "--profile", "custom", "--profile-file", os.path.join(PROFILES, "host-pass.txt"),
                 "--allow-missing", "--json")
    check(passing.returncode == 0, f"verify host-pass exit {passing.returncode}: {passing.stdout} {passing.stderr}")
    if passing.returncode == 0:
        doc = json.loads(passing.stdout)
        checks = {(c["check"], c["status"]) for c in doc["checks"]}
        check(doc["verdict"] == "pass" and doc["failed"] == 0 and doc["missing"] == 1, f"verdict {doc['verdict']}")
        for name in ("topology_class", "gpus_per_node", "intra_allreduce_busbw", "inter_allreduce_busbw_per_nic",
                     "pair_fraction"):
            check((name, "pass") in checks, f"check {name} passed: {sorted(checks)}")
        intra = [c for c in doc["checks"] if c["check"] == "intra_allreduce_busbw"]
        check(len(intra) == args.np // 2 and all(c["measured"] > 0 and "1 MiB..4 MiB" in c["detail"] for c in intra),
              f"intra judged per node on the plateau: {intra}")
        print("verify pass: " + ", ".join(f"{c['check']} {c['subject']} {c['measured']}" for c in doc["checks"]
                                          if isinstance(c["measured"], float)))
    failing = fm("verify", big, "--profile-file", os.path.join(PROFILES, "host-fail.txt"))
    check(failing.returncode == 1 and "VERDICT: FAIL" in failing.stdout
          and "intra_allreduce_busbw node0" in failing.stdout.splitlines()[-1],
          f"verify host-fail: exit {failing.returncode}: {failing.stdout[-600:]}")
    builtin = fm("verify", big, "--profile", "hgx-h100-8", "--json")
    check(builtin.returncode == 1, f"verify hgx-h100-8 exit {builtin.returncode}: {builtin.stderr}")
    if builtin.stdout.strip():
        doc = json.loads(builtin.stdout)
        classes = [c for c in doc["checks"] if c["check"] == "topology_class"]
        check(classes and all(c["status"] == "fail" and c["measured"] == "NO_GPU" for c in classes),
              f"hgx-h100-8 topology class: {classes}")
        # a 4 MiB sweep cannot show an NVSwitch plateau: not measured, with the reason
        intra = [c for c in doc["checks"] if c["check"] == "intra_allreduce_busbw"]
        check(intra and intra[0]["status"] == "missing" and "min_plateau_bytes" in intra[0]["detail"], f"{intra}")
    # --record writes /verdict
    rec = fm("verify", big, "--profile-file", os.path.join(PROFILES, "host-fail.txt"), "--record")
    check(rec.returncode == 1, f"verify --record exit {rec.returncode}: {rec.stderr}")
    with h5py.File(big, "r") as f:
        v = f["verdict"].attrs if "verdict" in f else {}
        check(v and bool(v["pass"]) is False and text(v["profile"]) == "host-too-fast" and int(v["failed"]) >= 1
              and "intra_allreduce_busbw" in text(v["reasons"]), f"/verdict {dict(v)}")
    check(not os.path.exists(big + ".verdict"), "the verdict's working copy was left behind")
    shown = fm("show", big)
    check(shown.returncode == 0 and "# acceptance: FAIL against profile host-too-fast" in shown.stdout,
          f"show after --record: {shown.stdout[:800]} {shown.stderr}")
    shown = fm("show", big, "--json")
    acceptance = json.loads(shown.stdout)["acceptance"] if shown.returncode == 0 else None
    check(acceptance and acceptance["pass"] is False and acceptance["verdict"] == "fail"
          and any("intra_allreduce_busbw" in r for r in acceptance["reasons"]), f"show --json acceptance: {acceptance}")
    # unusable input: exit 2 with one message
    notes = os.path.join(tmp, "notes.h5")
    with open(notes, "w") as f:
        f.write("not hdf5\n")
    bad_profile = os.path.join(tmp, "bad.txt")
    with open(bad_profile, "w") as f:
        f.write("# ok\nmin_pair_fraction = lots\n")
    for extra, expect in (([notes, "--profile", "pcie-8"], "not an HDF5 file"),
                          ([os.path.join(tmp, "absent.h5"), "--profile", "pcie-8"], "absent.h5"),
                          ([big, "--profile", "dgx-9000"], "unknown profile"),
                          ([big, "--profile-file", bad_profile], "bad.txt:2: min_pair_fraction")):
        p = fm("verify", *extra)
        ok, lines = one_error_line(p)
        check(p.returncode == 2 and ok and expect in lines[0], f"verify {extra}: exit {p.returncode} {lines}")

    # compare: 4 ranks against 2, figures side by side
    c = fm("compare", big, small, "--label", "np4", "--label", "np2", "--json")
    check(c.returncode == 0, f"compare exit {c.returncode}: {c.stderr}")
    if c.returncode == 0:
        doc = json.loads(c.stdout)
        check([f["ranks"] for f in doc["files"]] == [args.np, 2] and doc["reference"] == "np4", "compare files")
        rows = {r["key"]: r for r in doc["rows"]}
        for key in ("collectives.intra.all_reduce.plateau_busbw", "collectives.world.all_reduce.peak_busbw",
                    "topology.classes", "findings.error"):
            check(key in rows and len(rows[key]["values"]) == 2, f"compare row {key}")
        world = rows.get("collectives.world.all_reduce.plateau_busbw", {"values": [{}, {}]})["values"]
        check(all(isinstance(v.get("value"), float) and v["value"] > 0 for v in world), f"world plateau {world}")
        check(isinstance(world[1].get("ratio"), float) and isinstance(world[1].get("differs"), bool), f"{world}")
        # one node of 2 ranks measures no separate intra scope: its world is the node's inside, so
        # its world plateau answers the intra row
        intra = rows.get("collectives.intra.all_reduce.plateau_busbw", {"values": [{}, {}]})["values"]
        check(intra[0].get("value", 0) > 0 and intra[1].get("value") == world[1].get("value"),
              f"intra plateau {intra} (world {world})")
        check(rows.get("pairs.inter_node.median", {"values": [{}, {}]})["values"][1].get("value") is None,
              "np2 (one node) has no inter-node pairs")
        print("compare: " + "; ".join(f"{k} {[v['value'] for v in r['values']]} differs {[v['differs'] for v in r['values']]}"
                                     for k, r in rows.items() if "plateau_busbw" in k))
    t = fm("compare", big, small, "--tolerance", "0.05")
    check(t.returncode == 0 and "# fabricmap compare: 2 files, reference" in t.stdout and "tolerance 5%" in t.stdout,
          f"compare text: {t.stdout[:400]} {t.stderr}")
    bad = fm("compare", big, notes)
    ok, lines = one_error_line(bad)
    check(bad.returncode == 2 and ok, f"compare of an unusable file: exit {bad.returncode} {lines}")


def four_gpu_variant(a100_log):
    """The A100 log as a 4-GPU run of the same server would print it. DERIVED, not measured: ranks
    4-7 dropped, every time x 0.84 and algbw/busbw recomputed from it (busbw = algbw x 2(n-1)/n), so
    the 4-GPU busbw is 1/0.84 x 1.5/1.75 = 1.02 x the 8-GPU one: 8 vs 4 GPUs scale at 0.98."""
    out = []
    for line in a100_log.splitlines():
        fields = line.split()
        if line.startswith("#   Rank") and int(fields[2]) >= 4:
            continue
        if line.startswith("# nThread"):
            line = line.replace("nGpus 8", "nGpus 4")
        if fields and fields[0].isdigit() and len(fields) == 12:
            size = int(fields[0])
            for t in (4, 8):  # out-of-place and in-place: time algbw busbw error
                us = float(fields[t]) * 0.84
                algbw = size / us / 1e3
                fields[t:t + 3] = [f"{us:.2f}", f"{algbw:.2f}", f"{algbw * 1.5:.2f}"]
            line = " ".join(f"{v:>12}" for v in fields)
        out.append(line)
    return "\n".join(out) + "\n"


def case_compare_logs(args, tmp):
    """A capacity planner's comparison of real nccl-tests logs (tests/data/nccl-tests): an 8-GPU A100
    server, two GH200 nodes of four, and a 4-GPU variant of the A100 log. `compare` prices each at its
    own offer (a providers file, --price), predicts the same model on each (days, cost), says beside
    each row what its files measured differently, and reports 8-vs-4-GPU scaling; `show`, the report
    and `compare` state one peak; `history` warns when the files are two clusters."""
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, "..", "data", "nccl-tests")
    providers = os.path.join(here, "..", "data", "providers", "a100-gh200.txt")

    def fm(*argv):
        return subprocess.run([args.fabricmap] + list(argv), capture_output=True, text=True, timeout=120)

    with open(os.path.join(data, "a100-sxm4-8gpu-allreduce-superbench-testdata.txt")) as f:
        four_log = os.path.join(tmp, "a100-4gpu-allreduce-derived.txt")
        with open(four_log, "w") as g:
            g.write(four_gpu_variant(f.read()))
    a100, gh200, a100_4 = (os.path.join(tmp, n) for n in ("a100.h5", "gh200.h5", "a100-4.h5"))
    for log, out in (("a100-sxm4-8gpu-allreduce-superbench-testdata.txt", a100),
                     ("gh200-2node-8gpu-allreduce-slingshot-cscs-alps.txt", gh200), (four_log, a100_4)):
        p = fm("import", "nccl-tests", os.path.join(data, log), "-o", out)
        check(p.returncode == 0, f"import {log}: exit {p.returncode} {p.stderr}")

    # one peak: show, the report and compare state the out-of-place figure (GH200: in-place is higher)
    s = fm("show", gh200)
    check(s.returncode == 0 and "122.57 at 128 MiB; in-place 123.11 at 128 MiB" in s.stdout,
          f"show's peak: {[l for l in s.stdout.splitlines() if 'all_reduce' in l and 'at' in l][-1:]}")
    html = os.path.join(tmp, "gh200.html")
    r = fm("report", gh200, "-o", html)
    check(r.returncode == 0, f"report exit {r.returncode} {r.stderr}")
    if r.returncode == 0:
        with open(html) as f:
            page = f.read()
        check("peak busbw out-of-place <b>122.57 GB/s at 128 MiB</b>, in-place 123.11 GB/s at 128 MiB" in page,
              "the report's peak caption")

    model = ["--model", "llama-7b", "--layout", "tp=8", "--global-batch", "64"]
    c = fm("compare", a100, gh200, a100_4, "--label", "a100", "--label", "gh200", "--label", "a100-4",
           "--providers", providers, "--price", "a100-4=1.10", *model, "--json")
    check(c.returncode == 0, f"compare exit {c.returncode}: {c.stderr}")
    if c.returncode != 0:
        return
    doc = json.loads(c.stdout)
    rows = {r["key"]: r for r in doc["rows"]}

    def values(key):
        return [v["value"] for v in rows.get(key, {"values": [{}, {}, {}]})["values"]]

    def caveats(key):
        return " | ".join(rows.get(key, {}).get("caveats", []))

    files = doc["files"]
    check([f["price_per_gpu_hour"] for f in files] == [1.29, 2.49, 1.10]
          and [f["price_from"] for f in files] == [f"{providers}:4", f"{providers}:5", "--price"],
          f"prices {[(f['price_per_gpu_hour'], f['price_from']) for f in files]}")
    check(files[1]["gpu_memory_bytes"] == 96 * 2**30 and files[0]["one_node"] and not files[1]["one_node"],
          "the providers' GPU memory, one node or not")
    check(values("collectives.world.all_reduce.peak_busbw")[:2] == [235.26, 122.57], "compare's peaks")
    # days and cost of the same model, each at its file's own price; the 4-GPU file cannot hold
    # tp=8 groups and says why
    days, hours, cost = values("prediction.days"), values("prediction.gpu_hours"), values("prediction.cost")
    check(all(isinstance(v, float) and v > 0 for v in days[:2] + hours[:2] + cost[:2]),
          f"days {days} hours {hours} cost {cost}")
    check(values("prediction.step_seconds")[2] == "unknown" and "measured one node" in files[2]["prediction_error"],
          f"a100-4's prediction: {files[2]['prediction_error']}")
    if all(isinstance(v, float) for v in days[:2] + hours[:2] + cost[:2]):
        for d, h, k, f in zip(days[:2], hours[:2], cost[:2], files):
            check(math.isclose(k, h * f["price_per_gpu_hour"], rel_tol=1e-9) and math.isclose(d, h / 8 / 24, rel_tol=1e-9),
                  f"{f['label']}: cost {k} = {h} GPU-hours x {f['price_per_gpu_hour']}, {d} days")
        check(files[0]["prediction"]["days"] == days[0], "the file's prediction has its days")
    check(values("prediction.fits") == ["yes", "yes", "yes"], f"fits {values('prediction.fits')}")
    # caveats beside the rows that compare different things
    world = caveats("collectives.world.all_reduce.plateau_busbw")
    check("world scope: one node: NVLink/PCIe inside it, no network (a100, a100-4); 2 nodes: across the network (gh200)"
          in world and "plateau over 2 GiB..8 GiB (a100, a100-4); 32 MiB..128 MiB (gh200)" in world
          and "groups of 8 ranks (a100, gh200); 4 ranks (a100-4)" in world, f"world plateau caveats: {world}")
    check("sweep up to 8 GiB (a100, a100-4); 128 MiB (gh200)" in caveats("collectives.world.all_reduce.peak_busbw"),
          "peak caveat")
    check(caveats("collectives.intra.all_reduce.plateau_busbw") == "groups of 8 ranks (a100); 4 ranks (a100-4)",
          f"intra caveats: {caveats('collectives.intra.all_reduce.plateau_busbw')}")
    check(caveats("files.ranks") == "", "no caveat on context rows")
    # 8 vs 4 GPUs of the A100 server: busbw plateau of the larger / of the smaller
    scaling = values("scaling.all_reduce.efficiency")
    plateau = values("collectives.world.all_reduce.plateau_busbw")
    check(scaling[1] is None and scaling[2] == 1.0 and isinstance(scaling[0], float)
          and math.isclose(scaling[0], plateau[0] / plateau[2], rel_tol=1e-9) and 0.97 < scaling[0] < 0.99,
          f"scaling {scaling}, plateaus {plateau}")
    t = fm("compare", a100, gh200, a100_4, "--label", "a100", "--label", "gh200", "--label", "a100-4",
           "--providers", providers, "--price", "a100-4=1.10", *model)
    check(t.returncode == 0 and "  ! world scope: one node" in t.stdout and "scaling all_reduce" in t.stdout
          and "(8/4 GPUs)" in t.stdout and "# gh200: price 2.49 USD per GPU-hour from" in t.stdout
          and "the files name no host (localhost)" in t.stdout,
          f"compare text: {t.stdout[-1500:]}")
    print(t.stdout)

    # bad offers: one message naming the file and line, exit 2
    bad = os.path.join(tmp, "bad-providers.txt")
    with open(bad, "w") as f:
        f.write("a100 1.29 40G\ngh200.h5 two-fifty\n")
    stray = os.path.join(tmp, "stray-providers.txt")
    with open(stray, "w") as f:
        f.write("a100 1.29\nlambda 1.10\n")
    for extra, want in ((["--providers", bad], bad + ":2: price per GPU-hour: 'two-fifty' is not a number"),
                        (["--providers", stray], stray + ":2: 'lambda' is none of the compared files"),
                        (["--providers", os.path.join(tmp, "absent.txt")], "absent.txt"),
                        (["--price", "lambda=1"], "'lambda' is none of the compared files"),
                        (["--price", "a100"], "expected FILE=USD")):
        p = fm("compare", a100, gh200, "--label", "a100", "--label", "gh200", *extra)
        ok, lines = one_error_line(p)
        check(p.returncode == 2 and ok and want in lines[0], f"compare {extra}: exit {p.returncode} {lines}")

    # history: two runs on the GH200 nodes are one cluster; logs printed on "localhost" name no machine,
    # so each A100 log is a cluster of its own and the mix is said
    again = os.path.join(tmp, "gh200-again.h5")
    shutil.copyfile(gh200, again)
    h = fm("history", gh200, again, "--json")
    check(h.returncode == 0 and "warning" not in h.stderr and json.loads(h.stdout)["mixed_clusters"] is False,
          f"history of one cluster: {h.returncode} {h.stderr}")
    h = fm("history", a100, gh200, a100_4, again, "--json")
    doc = json.loads(h.stdout) if h.returncode == 0 else {}
    check(h.returncode == 0 and "fabricmap history: warning: the 4 runs mix 3 clusters" in h.stderr
          and "localhost (" in h.stderr and doc.get("mixed_clusters") is True and len(doc.get("clusters", [])) == 3
          and doc["warnings"] and sorted(len(c["runs"]) for c in doc["clusters"]) == [1, 1, 2],
          f"history of two clusters: {h.returncode} {h.stderr} {doc.get('clusters')}")
