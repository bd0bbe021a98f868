"""The NumPy parts work without matplotlib; the drawing parts say how to get it."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from keras_attention.visualization.alignment import plot_alignment
from keras_attention.visualization.confusion import plot_confusion_matrix
from keras_attention.visualization.image_attention import plot_caption_attention
from keras_attention.visualization.rollout import plot_head_maps
from keras_attention.visualization.rollout import plot_rollout


@pytest.fixture
def without_matplotlib(monkeypatch):
    # A None entry in sys.modules makes `import matplotlib...` raise ImportError.
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)


def test_drawing_without_matplotlib_says_how_to_install_it(without_matplotlib):
    image = np.zeros((8, 8, 3))
    calls = [
        lambda: plot_alignment(np.eye(2), ["a", "b"], ["x", "y"]),
        lambda: plot_caption_attention(image, np.ones((1, 2, 2)), ["a"]),
        lambda: plot_rollout(image, np.ones((2, 2))),
        lambda: plot_head_maps(image, np.ones((1, 5, 5)), (2, 2)),
        lambda: plot_confusion_matrix([0], [0], ["a"]),
    ]
    for call in calls:
        with pytest.raises(ImportError, match="pip install matplotlib"):
            call()


def test_package_imports_and_computes_without_matplotlib():
    script = textwrap.dedent(
        """
        import sys
        sys.modules["matplotlib"] = None  # importing it now raises ImportError
        import numpy as np
        from keras_attention import visualization

        rollout = visualization.attention_rollout([np.full((2, 5, 5), 0.2)] * 3)
        assert visualization.rollout_to_image_map(rollout, (2, 2)).shape == (2, 2)
        assert visualization.upsample_attention(np.eye(2), (4, 4)).shape == (4, 4)
        assert visualization.confusion_matrix([0, 1], [1, 1], 2).tolist() == [[0, 1], [0, 1]]
        print("ok")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("ok")
