"""The package layout: no submodule is shadowed by a name its star-imports bring in, and
the sequence-to-sequence toolkit does not pull in the corpus generator."""

import importlib
import pkgutil
import subprocess
import sys

import d2lite


def test_no_submodule_is_shadowed_by_a_star_import():
    for info in pkgutil.iter_modules(d2lite.__path__):
        module = importlib.import_module(f"d2lite.{info.name}")
        assert getattr(d2lite, info.name) is module, (
            f"d2lite.{info.name} is {getattr(d2lite, info.name)!r}, not the module: a name "
            f"exported by a star-import shadows it"
        )


def test_plot_is_the_function_and_plotting_the_module():
    import d2lite.plotting as plotting

    assert callable(d2lite.plot) and d2lite.plot is plotting.plot
    assert d2lite.show_heatmaps is plotting.show_heatmaps


def test_seq2seq_does_not_import_the_corpus_generator():
    # d2lite/__init__ imports everything: load seq2seq under an empty package instead.
    path = d2lite.__path__[0]
    code = (
        "import importlib, sys, types; "
        f"pkg = types.ModuleType('d2lite'); pkg.__path__ = [{path!r}]; "
        "sys.modules['d2lite'] = pkg; "
        "importlib.import_module('d2lite.seq2seq'); print('d2lite.data' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
