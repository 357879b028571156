"""comparecast's confidence sequence for k29 vs laplace (Brier), computed by comparecast's own code, beside the arena's.

comparecast's figure ``comparecast_cs_k29_laplace_BrierScore`` draws, for its synthetic experiment
(``forecasts/default.csv``, shipped as adversaries/data/comparecast_default.csv.gz), the 95% empirical-Bernstein
confidence sequence of the running mean Brier-score difference between its K29 (``k29_poly3``) and its Laplace
forecaster. This script

1. computes that sequence with comparecast's own ``compare_forecasts`` (its default settings: ``confseq_eb``,
   ``boundary_type="mixture"``, ``v_opt=10``, alpha = 0.05), and again with ``boundary_type="stitching"``;
2. plays the same two published forecast columns in the arena (``forecaster=replay`` against ``nature=replay`` on
   the shipped file, T = 10^4) and computes the arena's sequence from the rounds it recorded, with the functions
   ``arena-compare`` uses (:func:`arena.compare.pair_scores`, :func:`arena.compare.sequential_comparison`);
3. prints both at a few rounds with their width ratio, and draws them (``--figure``, docs/comparecast_cs.png).

It needs comparecast in a scratch virtual environment, never the project's::

    python -m venv /tmp/ccvenv && /tmp/ccvenv/bin/pip install --no-deps comparecast==1.0.0
    .venv/bin/python benchmarks/comparecast_cs.py --comparecast /tmp/ccvenv/lib/python3.11/site-packages \\
        --figure docs/comparecast_cs.png

comparecast imports ``confseq``, whose boundaries are a C++ extension that needs Boost (it does not build here);
:func:`confseq_shim` replaces the boundaries comparecast calls with pure-Python ones written from Howard et al.
(2021): the gamma-exponential mixture (Proposition 9, one-sided, tuned at v_opt), the polynomial stitching
boundary (eq. (10)) and the normal mixtures. comparecast is imported from its folder without its package
``__init__`` (which imports seaborn); its ``tqdm`` is stubbed.

Its BrierScore is a score (higher is better): S(p, y) = 1 - (p - y)^2 for a binary p, so its difference
k29 - laplace is minus the arena's loss difference; the figure and the numbers use the arena's sign.
"""

from __future__ import annotations

import argparse
import math
import sys
import types
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from adversaries.replay import Replay  # noqa: E402
from arena import play  # noqa: E402
from arena.compare import pair_scores, sequential_comparison  # noqa: E402
from forecasters.replay import ForecastReplay  # noqa: E402

DATA = "pkg:adversaries/data/comparecast_default.csv.gz"
ALPHA = 0.05


# ------------------------------------------------------------------ confseq's boundaries in pure Python
def _one_sided_rho(v_opt: float, alpha_opt: float) -> float:
    """The normal mixture's precision tuned for v_opt (Howard et al. 2021, eq. (14)), one-sided: alpha doubled."""
    a = 2 * alpha_opt
    return v_opt / (2 * math.log(1 / a) + math.log(1 + 2 * math.log(1 / a)))


def _two_sided_rho(v_opt: float, alpha_opt: float) -> float:
    return v_opt / (2 * math.log(1 / alpha_opt) + math.log(1 + 2 * math.log(1 / alpha_opt)))


def _gamma_exp_log_mixture(s: float, v: float, rho: float, c: float) -> float:
    """log of the gamma-exponential mixture supermartingale at (S_t, V_t) = (s, v), scale c, mixing precision rho
    (Howard et al. 2021, Prop. 9): a Gamma(rho/c^2, rho/c^2) mixture of exp(lambda s - psi_E(lambda) v)."""
    r = rho / (c * c)
    a = (v + rho) / (c * c)  # shape after v
    b = (c * s + v) / (c * c) + r  # rate after s and v
    lead = r * math.log(r) - special.gammaln(r) - math.log(special.gammainc(r, r))
    return lead + special.gammaln(a) + math.log(special.gammainc(a, b)) - a * math.log(b) + b - r


def _mixture_root(log_mg, v: float, log_threshold: float) -> float:
    """The s where log_mg(s, v) reaches log_threshold: doubling from s = v, then a root search."""
    hi = v
    for _ in range(60):
        if log_mg(hi, v) > log_threshold:
            break
        hi *= 2
    else:
        raise RuntimeError("no upper limit for the mixture bound")
    return optimize.brentq(lambda s: log_mg(s, v) - log_threshold, 0.0, hi, xtol=1e-12, rtol=1e-13)


def gamma_exponential_mixture_bound(v, alpha, v_opt, c, alpha_opt=0.05):
    rho = _one_sided_rho(v_opt, alpha_opt)
    out = [
        _mixture_root(lambda s, w: _gamma_exp_log_mixture(s, w, rho, c), w, math.log(1 / alpha)) for w in np.ravel(v)
    ]
    return np.reshape(out, np.shape(v))


def poly_stitching_bound(v, alpha, v_min, c=0.0, s=1.4, eta=2.0):
    """Howard et al. (2021), eq. (10): k1 sqrt(v l) + c k2 l at max(v, v_min)."""
    v = np.maximum(np.asarray(v, float), v_min)
    ell = s * np.log(np.log(eta * v / v_min)) + math.log(special.zeta(s) / math.log(eta) ** s) + math.log(1 / alpha)
    k1 = (eta**0.25 + eta**-0.25) / math.sqrt(2)
    k2 = (math.sqrt(eta) + 1) / 2
    return np.sqrt(k1 * k1 * v * ell + (k2 * c * ell) ** 2) + k2 * c * ell


def normal_log_mixture(s, v, v_opt, alpha_opt=0.05, is_one_sided=True):
    if is_one_sided:
        rho = _one_sided_rho(v_opt, alpha_opt)
        return 0.5 * np.log(4 * rho / (v + rho)) + s * s / (2 * (v + rho)) + stats.norm.logcdf(s / np.sqrt(v + rho))
    rho = _two_sided_rho(v_opt, alpha_opt)
    return 0.5 * np.log(rho / (v + rho)) + s * s / (2 * (v + rho))


def normal_mixture_bound(v, alpha, v_opt, alpha_opt=0.05, is_one_sided=True):
    if is_one_sided:
        out = [
            _mixture_root(lambda s, w: float(normal_log_mixture(s, w, v_opt, alpha_opt)), w, math.log(1 / alpha))
            for w in np.ravel(v)
        ]
        return np.reshape(out, np.shape(v))
    rho = _two_sided_rho(v_opt, alpha_opt)
    v = np.asarray(v, float)
    return np.sqrt((v + rho) * (np.log(1 + v / rho) + 2 * math.log(1 / alpha)))


def confseq_shim() -> types.ModuleType:
    """A module ``confseq`` whose ``boundaries`` are the pure-Python functions above."""
    boundaries = types.ModuleType("confseq.boundaries")
    for fn in (gamma_exponential_mixture_bound, poly_stitching_bound, normal_log_mixture, normal_mixture_bound):
        setattr(boundaries, fn.__name__, fn)
    confseq = types.ModuleType("confseq")
    confseq.boundaries = boundaries
    return confseq


def comparecast_module(source: Path):
    """comparecast.comparecast imported from ``source`` (the scratch venv's site-packages) with the shims."""
    confseq = confseq_shim()
    tqdm = types.ModuleType("tqdm")
    tqdm.trange = lambda *a, **k: range(*a)
    tqdm.tqdm = lambda it, *a, **k: it
    package = types.ModuleType("comparecast")
    package.__path__ = [str(source / "comparecast")]
    sys.modules.update({"confseq": confseq, "confseq.boundaries": confseq.boundaries, "tqdm": tqdm})
    sys.modules["comparecast"] = package
    import comparecast.comparecast as cc

    return cc


def check_shim() -> None:
    """The gamma-exponential mixture tends to the one-sided normal mixture as its scale c -> 0 (sub-gamma with
    c = 0 is sub-Gaussian), and the stitching shim equals the arena's own stitching boundary."""
    from arena.sequential import stitching_boundary

    for v in (10.0, 1e3, 1e5):
        g = float(gamma_exponential_mixture_bound(v, 0.025, 10.0, 1e-4, 0.025))
        n = float(normal_mixture_bound(v, 0.025, 10.0, 0.025, True))
        s1, s2 = float(poly_stitching_bound(v, 0.025, 10.0, 2.0)), float(stitching_boundary(v, 0.025, 2.0))
        print(
            f"shim check v={v:g}: gamma-exponential (c=1e-4) {g:.6f} vs one-sided normal {n:.6f}; "
            f"stitching {s1:.6f} vs the arena's {s2:.6f}"
        )


# ------------------------------------------------------------------ the two sequences
def arena_sequence(T: int) -> pd.DataFrame:
    """The arena's confidence sequence of k29_poly3 - laplace (Brier loss), from its own replay of both columns."""
    runs = {
        column: play("binary", ForecastReplay(DATA, column=column), Replay(DATA, column="y"), T=T, seed=0).recorder
        for column in ("k29_poly3", "laplace")
    }
    a, b = runs["k29_poly3"], runs["laplace"]
    return sequential_comparison(pair_scores(a.p, b.p, a.y, b.y, "brier"), ALPHA)


def comparecast_sequences(cc, T: int) -> dict[str, pd.DataFrame]:
    """comparecast's own sequences (its sign flipped to the arena's: loss difference), by boundary type."""
    with resources.as_file(resources.files("adversaries") / "data/comparecast_default.csv.gz") as path:
        data = pd.read_csv(path).iloc[:T]
    out = {}
    for boundary in ("mixture", "stitching"):
        res = cc.compare_forecasts(
            data, "k29_poly3", "laplace", "brier", alpha=ALPHA, compute_e=False, boundary_type=boundary, v_opt=10
        )
        out[boundary] = pd.DataFrame({"t": res.time, "low": -res.ucb, "high": -res.lcb})
    return out


def first_excluding_zero(low: np.ndarray, high: np.ndarray) -> int | None:
    hit = np.flatnonzero((high < 0) | (low > 0))
    return int(hit[0]) + 1 if hit.size else None


def report(ours: pd.DataFrame, theirs: dict[str, pd.DataFrame]) -> None:
    for t in (100, 1000, 10_000):
        if t > len(ours):
            continue
        i = t - 1
        line = f"t={t:6d} arena [{ours.low[i]:+.5f}, {ours.high[i]:+.5f}]"
        for name, d in theirs.items():
            ratio = (ours.high[i] - ours.low[i]) / (d.high[i] - d.low[i])
            line += f" | comparecast {name} [{d.low[i]:+.5f}, {d.high[i]:+.5f}] (width ratio arena/it {ratio:.3f})"
        print(line)
    print(f"mean k29_poly3 - laplace at T={len(ours)}: {ours['mean'].iat[-1]:+.5f}")
    print(f"first round excluding 0: arena {first_excluding_zero(ours.low.values, ours.high.values)}", end="")
    for name, d in theirs.items():
        print(f", comparecast {name} {first_excluding_zero(d.low.values, d.high.values)}", end="")
    print()


def figure(ours: pd.DataFrame, theirs: dict[str, pd.DataFrame], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(7.0, 3.0), constrained_layout=True)
    t = ours.t.values
    mix = theirs["mixture"]
    ax.fill_between(t, mix.low, mix.high, color="#DDCC77", alpha=0.6, lw=0, label="comparecast (mixture)")
    ax.plot(t, ours.low, color="#332288", lw=1.2, label="arena (stitching)")
    ax.plot(t, ours.high, color="#332288", lw=1.2)
    ax.plot(t, ours["mean"], color="k", lw=0.8, label="running mean")
    ax.axhline(0, color="0.5", lw=0.6, ls="--")
    ax.set(xscale="log", ylim=(-0.4, 0.3), xlabel="round t", ylabel="k29 − laplace, mean Brier loss")
    ax.set_title("95% confidence sequences", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    inside = ((ours.low > -1) & (ours.high < 1)).values  # the arena clips its interval to [-1, 1]; comparecast not
    for name, d, style in (("mixture", mix, "-"), ("stitching", theirs["stitching"], ":")):
        ratio = ((ours.high - ours.low) / (d.high - d.low)).values
        ax2.plot(t[inside], ratio[inside], color="#882255", ls=style, lw=1.2, label=f"/ comparecast ({name})")
    ax2.axhline(1, color="0.5", lw=0.6, ls="--")
    ax2.set(xscale="log", xlim=ax.get_xlim(), ylim=(0.6, 2.0), xlabel="round t", ylabel="width: arena / comparecast")
    ax2.set_title("width ratio (rounds where neither is clipped)", fontsize=9)
    ax2.legend(fontsize=7)
    for a in (ax, ax2):
        a.tick_params(labelsize=7)
        a.xaxis.label.set_size(8)
        a.yaxis.label.set_size(8)
    fig.savefig(path, dpi=200)
    print(f"figure: {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparecast", type=Path, required=True, help="the scratch venv's site-packages folder")
    parser.add_argument("-T", type=int, default=10_000)
    parser.add_argument("--figure", type=Path, help="where to save the figure (PNG)")
    args = parser.parse_args()
    check_shim()
    cc = comparecast_module(args.comparecast)
    ours, theirs = arena_sequence(args.T), comparecast_sequences(cc, args.T)
    report(ours, theirs)
    if args.figure:
        figure(ours, theirs, args.figure)


if __name__ == "__main__":
    main()
