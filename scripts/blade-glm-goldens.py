"""Golden values for clade's embedded model engine (src/env/blade/glm.ts).

Writes small seeded data sets to tests/fixtures/blade/glm/*.csv, fits each model with
statsmodels' formula API (the estimator BLADE's agents use), and writes the parameter names,
estimates, standard errors and p-values to tests/fixtures/blade/glm/goldens.json.

Run with the system Python that has pandas 1.5.3 and statsmodels 0.13.5:
    /usr/bin/python3 scripts/blade-glm-goldens.py
"""
import json
import os
import warnings

import numpy as np
import pandas as pd
import patsy
import statsmodels
import statsmodels.api as sm
import statsmodels.formula.api as smf

OUT_DIR = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "blade", "glm")
SEED = 20240614
ROWS = 240


def make_main(rng):
    n = ROWS
    x = rng.normal(0, 1, n)
    z = rng.normal(2, 1.5, n)
    k = rng.integers(1, 4, n)
    g = rng.choice(["a", "b", "c"], n)
    h = rng.choice(["u", "v"], n)
    flag = rng.random(n) < 0.4
    g_effect = np.select([g == "b", g == "c"], [0.8, -0.5], 0.0)
    y = 1 + 0.5 * x - 0.3 * z + g_effect + rng.normal(0, 1, n)
    eta = -0.3 + 0.9 * x - 0.2 * z + 0.5 * (h == "v") + 0.4 * flag
    yb = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    yp = (rng.normal(0, 1, n) < 0.2 + 0.6 * x - 0.25 * z).astype(int)
    cnt = rng.poisson(np.exp(0.4 + 0.3 * x + 0.2 * (g == "b")))
    pos = np.exp(0.5 + 0.2 * x) + rng.normal(0, 0.3, n) + 1.0
    df = pd.DataFrame(
        {
            "x": np.round(x, 6),
            "z": np.round(z, 6),
            "k": k,
            "g": g,
            "h": h,
            "flag": flag,
            "y": np.round(y, 6),
            "yb": yb,
            "yp": yp,
            "cnt": cnt,
            "pos": np.round(pos, 6),
        }
    )
    # Missing values, so that listwise deletion is exercised.
    df.loc[[3, 50, 111], "x"] = np.nan
    df.loc[[7, 90], "g"] = np.nan
    df.loc[[150], "y"] = np.nan
    return df


def make_separated(rng):
    x = np.round(rng.normal(0, 1, 60), 6)
    return pd.DataFrame({"x": x, "y": (x > 0).astype(int)})


# (name, data file, clade's model call, the statsmodels call on df)
CASES = [
    ("ols_categorical", "main.csv", "ols(y ~ x + z + C(g))", lambda df: smf.ols("y ~ x + z + C(g)", df)),
    ("ols_interaction_object", "main.csv", "ols(y ~ x*z + g)", lambda df: smf.ols("y ~ x*z + g", df)),
    ("ols_no_intercept", "main.csv", "ols(y ~ C(g) + x - 1)", lambda df: smf.ols("y ~ C(g) + x - 1", df)),
    ("ols_numeric_by_categorical", "main.csv", "ols(y ~ x:C(h) + z)", lambda df: smf.ols("y ~ x:C(h) + z", df)),
    ("ols_categorical_pair", "main.csv", "ols(y ~ C(g):C(h))", lambda df: smf.ols("y ~ C(g):C(h)", df)),
    ("ols_int_as_categorical", "main.csv", "ols(y ~ C(k) + flag)", lambda df: smf.ols("y ~ C(k) + flag", df)),
    ("logit_mixed", "main.csv", "logit(yb ~ x + g + flag)", lambda df: smf.logit("yb ~ x + g + flag", df)),
    ("logit_interaction", "main.csv", "logit(yb ~ x*C(h) + C(k))", lambda df: smf.logit("yb ~ x*C(h) + C(k)", df)),
    ("probit", "main.csv", "probit(yp ~ x + z)", lambda df: smf.probit("yp ~ x + z", df)),
    ("poisson", "main.csv", "poisson(cnt ~ x + C(g))", lambda df: smf.poisson("cnt ~ x + C(g)", df)),
    (
        "glm_gaussian",
        "main.csv",
        "glm(y ~ x + z, family = gaussian)",
        lambda df: smf.glm("y ~ x + z", df, family=sm.families.Gaussian()),
    ),
    (
        "glm_gaussian_log",
        "main.csv",
        "glm(pos ~ x, family = gaussian, link = log)",
        lambda df: smf.glm("pos ~ x", df, family=sm.families.Gaussian(sm.families.links.log())),
    ),
    (
        "glm_binomial",
        "main.csv",
        "glm(yb ~ x + z + h, family = binomial)",
        lambda df: smf.glm("yb ~ x + z + h", df, family=sm.families.Binomial()),
    ),
    (
        "glm_binomial_probit",
        "main.csv",
        "glm(yp ~ x + z, family = binomial, link = probit)",
        lambda df: smf.glm("yp ~ x + z", df, family=sm.families.Binomial(sm.families.links.probit())),
    ),
    (
        "glm_binomial_cloglog",
        "main.csv",
        "glm(yb ~ x + z, family = binomial, link = cloglog)",
        lambda df: smf.glm("yb ~ x + z", df, family=sm.families.Binomial(sm.families.links.cloglog())),
    ),
    (
        "glm_poisson",
        "main.csv",
        "glm(cnt ~ x + C(g), family = poisson)",
        lambda df: smf.glm("cnt ~ x + C(g)", df, family=sm.families.Poisson()),
    ),
    (
        "glm_negativebinomial",
        "main.csv",
        "glm(cnt ~ x, family = negativebinomial)",
        lambda df: smf.glm("cnt ~ x", df, family=sm.families.NegativeBinomial()),
    ),
    ("logit_separated", "separated.csv", "logit(y ~ x)", lambda df: smf.logit("y ~ x", df)),
]


# Right-hand sides whose design-matrix column names (patsy's coding and order) are pinned.
PATSY_FORMULAS = [
    "x + C(g)", "x:C(g)", "x + x:C(g)", "C(g):C(h)", "C(g)*C(h)", "C(g) - 1", "C(g) + x - 1",
    "x + C(g) + C(h) - 1", "x*z", "z:x + x", "g + flag + C(k)", "C(h):x:z + x", "C(g):x + C(h)",
    "x:C(g):C(h)", "x + z:C(g) + C(h)", "x*C(g) - x", "x + 0", "-1 + x", "x + z + x:z + z:x",
    "C(g)*x*C(h)", "(x + z):C(h)", "x*z*C(h)",
]


def finite(value):
    return None if not np.isfinite(value) else float(value)


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    rng = np.random.default_rng(SEED)
    frames = {"main.csv": make_main(rng), "separated.csv": make_separated(rng)}
    dtypes = {}
    for name, frame in frames.items():
        path = os.path.join(OUT_DIR, name)
        frame.to_csv(path, index=False)
        # What the engine sees is the CSV as read back, as BLADE reads data.csv.
        frames[name] = pd.read_csv(path)
        dtypes[name] = {c: str(t) for c, t in frames[name].dtypes.items()}
    cases = []
    for name, data, code, fit in CASES:
        case = {"name": name, "data": data, "code": code}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = fit(frames[data])
                result = model.fit() if code.startswith(("ols", "glm")) else model.fit(disp=0)
            case.update(
                {
                    "names": list(result.params.index),
                    "params": [finite(v) for v in result.params.values],
                    "bse": [finite(v) for v in result.bse.values],
                    "pvalues": [finite(v) for v in result.pvalues.values],
                    "nobs": int(result.nobs),
                    # statsmodels only warns when it gives up; the engine refuses such fits.
                    "converged": bool(
                        result.mle_retvals["converged"] if hasattr(result, "mle_retvals") else getattr(result, "converged", True)
                    ),
                }
            )
        except Exception as error:  # the engine must refuse these too
            case["error"] = f"{type(error).__name__}: {error}"
        cases.append(case)
    patsy_names = [
        {"rhs": rhs, "names": patsy.dmatrix(rhs, frames["main.csv"]).design_info.column_names}
        for rhs in PATSY_FORMULAS
    ]
    golden = {
        "generator": "scripts/blade-glm-goldens.py",
        "statsmodels": statsmodels.__version__,
        "pandas": pd.__version__,
        "dtypes": dtypes,
        "cases": cases,
        "patsyNames": patsy_names,
    }
    with open(os.path.join(OUT_DIR, "goldens.json"), "w") as out:
        json.dump(golden, out, indent=1)
        out.write("\n")


if __name__ == "__main__":
    main()
