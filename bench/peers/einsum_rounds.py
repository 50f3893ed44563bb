"""bench/run einsum's rounds: merges the JSON lines of ferro's or the peers' side, several
rounds of an instance into the median of each timing, and names the instances short enough to
be timed again.

    python3 einsum_rounds.py short   # FERRO_OUT, PEER_OUT in the environment: the short instances

A timing is a row's "seconds" or other "..._seconds" (ferro's side) or the "seconds" of one of
its dicts (a peer's: numpy, torch, jax); everything else in a row (paths, how, operands) is kept
as the last round left it. Used by bench/run einsum and einsum_ad."""
import json, os, statistics, sys

# An instance is timed again when ferro's call and the fastest peer's take less than this: its
# round is then mostly process start-up (~3 s for the Python peers), not timing. A slower peer
# does not count: lm_batch_likelihood_brackets (ferro 6.5-15.6 ms, jax 10.5-15 ms from process
# to process) got one round because numpy took 59 ms, and that round read 1.33 against jax.
SHORT_CALL_SECONDS = 0.05


def by_case(text):
    """Each instance's rows merged into one, each timing the median over its rounds, with the
    number of rounds as "rounds" beside it."""
    rows, times = {}, {}
    for r in (json.loads(line) for line in text.splitlines() if line):
        case = r["case"]
        row = rows.setdefault(case, {})
        for key, value in r.items():
            if key.endswith("seconds") and isinstance(value, (int, float)):
                times.setdefault((case, None, key), []).append(value)
            elif isinstance(value, dict) and "seconds" in value:
                times.setdefault((case, key, "seconds"), []).append(value["seconds"])
                row[key] = dict(value)
            elif not (isinstance(value, dict) and "skipped" in value and key in row):  # a timed round wins
                row[key] = value
    for (case, key, name), seconds in times.items():
        target = rows[case] if key is None else rows[case][key]
        target[name] = statistics.median(seconds)
        if name == "seconds":
            target["rounds"] = len(seconds)
    return rows


def short_cases(ferro, peers):
    """Instances whose ratio's two sides, ferro's call and the fastest peer's, are under
    SHORT_CALL_SECONDS."""
    out = []
    for case, f in ferro.items():
        if "seconds" not in f:
            continue
        p = peers.get(case, {})
        peer_seconds = [v["seconds"] for v in p.values() if isinstance(v, dict) and "seconds" in v]
        if max(f["seconds"], min(peer_seconds, default=0.0)) < SHORT_CALL_SECONDS:
            out.append(case)
    return out


if __name__ == "__main__":
    if sys.argv[1:] != ["short"]:
        sys.exit("usage: einsum_rounds.py short  (FERRO_OUT and PEER_OUT in the environment)")
    print("\n".join(short_cases(by_case(os.environ["FERRO_OUT"]), by_case(os.environ.get("PEER_OUT", "")))))
