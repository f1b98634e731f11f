from leapp.ast_pass import analyze_source

SOURCE = '''
import numpy as np
from leapp import annotate

def f(frame):
    with open("log") as fh:
        x = annotate.input_tensors("n", {"x": frame})
        y = np.clip(x, 0, 1)
        annotate.output_tensors("n", {"y": y})
    try:
        pass
    except ValueError:
        pass
'''


def test_with_and_try_blocks_are_walked_without_internal_error():
    analysis = analyze_source(SOURCE, "m.py")
    assert not [d for d in analysis.diagnostics if d.code == "LP999"]
    assert any(s.name == "numpy.clip" and s.verdict == "supported" for s in analysis.sites)


REGION = '''
import numpy as np
from leapp import annotate

def f(frame):
    state, vel = annotate.input_tensors("n", {"state": frame["s"], "vel": frame["v"]})
    scale = float(state.max())
    annotate.output_tensors("n", {"y": vel / scale})
'''


def test_annotated_inputs_are_arrays_for_the_escape_rules():
    analysis = analyze_source(REGION, "r.py")
    assert [(d.code, d.line) for d in analysis.diagnostics] == [("LP201", 7)]


CONFIG = '''
import numpy as np
import leapp

@leapp.compile
def preprocess(obs, cfg):
    scale = float(cfg["scale"])
    if cfg["clip"]:
        obs = np.clip(obs, -1, 1)
    return obs * scale + float(obs.max())
'''


def test_string_keyed_lookups_are_not_arrays_but_array_escapes_still_are():
    analysis = analyze_source(CONFIG, "c.py")
    assert [(d.code, d.line) for d in analysis.diagnostics] == [("LP201", 10)]


MATCH = '''
import numpy as np
import leapp

@leapp.compile
def f(x, mode: int = 0):
    match mode:
        case 0:
            y = np.asarray(x).tolist()
        case _:
            y = float(np.sum(x))
    return y
'''


def test_match_statements_are_walked_case_by_case():
    # the walker read `Match.match_cases` (no such field: it is `cases`), so any match
    # statement in traced code was LP999 for the whole file
    analysis = analyze_source(MATCH, "m.py")
    assert [(d.code, d.line) for d in analysis.diagnostics] == [("LP203", 9), ("LP201", 11)]
