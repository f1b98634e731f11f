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
