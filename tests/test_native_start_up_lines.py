"""Native start-up lines (TensorFlow without CUDA, the SentencePiece op) left out of stderr."""

import os
import subprocess
import sys
import textwrap

from keras_attention.native_start_up_lines import is_start_up_line
from keras_attention.native_start_up_lines import native_start_up_lines_dropped

# Lines as this machine's TensorFlow and tensorflow-text write them.
START_UP_LINES = (
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1795879181.575811   22453 cudart_stub.cc:31] Could not find cuda drivers on "
    "your machine, GPU will not be used.",
    "E0000 00:00:1795879218.677788   22453 cuda_platform.cc:52] failed call to cuInit: "
    "INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)",
    "normalizer.cc(51) LOG(INFO) precompiled_charsmap is empty. use identity normalization.",
)


def test_the_block_drops_the_start_up_lines_and_writes_back_every_other_line_in_order(capfd):
    with native_start_up_lines_dropped():
        os.write(2, f"{START_UP_LINES[0]}\nfirst real line\n".encode())
        os.write(2, "\n".join(START_UP_LINES[1:]).encode() + b"\nsecond: \xc3\xa9\n")
    assert capfd.readouterr().err == "first real line\nsecond: é\n"


def test_lines_written_when_the_block_raises_are_kept(capfd):
    try:
        with native_start_up_lines_dropped():
            os.write(2, b"what went wrong\n")
            raise RuntimeError("stop")
    except RuntimeError:
        pass
    assert capfd.readouterr().err == "what went wrong\n"


def test_a_native_line_repeating_an_earlier_one_is_written_back_once(capfd):
    # TensorFlow's two native libraries each say this, a second apart.
    one_dnn = "port.cc:153] oneDNN custom operations are on. You may see slightly different"
    with native_start_up_lines_dropped():
        os.write(2, f"I0000 00:00:1795951059.600841   15181 {one_dnn}\n".encode())
        os.write(2, b'  File "a.py", line 1\n  File "a.py", line 1\n')
        os.write(2, f"I0000 00:00:1795951061.798555   15181 {one_dnn}\n".encode())
        os.write(2, f"I0000 00:00:1795951061.798555   15181 {one_dnn} results\n".encode())
    assert capfd.readouterr().err.splitlines() == [
        f"I0000 00:00:1795951059.600841   15181 {one_dnn}",
        '  File "a.py", line 1',
        '  File "a.py", line 1',  # not a native log line: kept as written
        f"I0000 00:00:1795951061.798555   15181 {one_dnn} results",
    ]


def test_only_the_known_lines_count_as_start_up_lines():
    assert all(is_start_up_line(line) for line in START_UP_LINES)
    for line in (
        "E0000 cuda_executor.cc:1] out of memory allocating 8.0GiB",
        "ValueError: `--dataset` must be ...",
        "WARNING: training is not learning",
    ):
        assert not is_start_up_line(line)


def test_a_script_importing_tensorflow_quietly_and_reading_a_vocabulary_prints_none_of_them():
    script = textwrap.dedent(
        """
        import os, sys
        os.environ.pop("TF_CPP_MIN_LOG_LEVEL", None)
        from keras_attention.native_start_up_lines import import_tensorflow_quietly
        tf = import_tensorflow_quietly()
        assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "2"
        # The runtime is not started: devices (and collective ops) can still be set up.
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        assert len(tf.config.list_logical_devices("CPU")) == 2
        from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
        sentences = [f"the cat {i} sat on mat {7 * i}" for i in range(200)]
        tokenizer = ReversibleTokenizer.train(sentences, 300)
        batches = tf.data.Dataset.from_tensor_slices(sentences).batch(8).map(tokenizer.tokenize)
        print(sum(int(b.shape[0]) for b in batches))
        print("a real warning", file=sys.stderr)
        """
    )
    env = {**os.environ, "KERAS_BACKEND": "tensorflow"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["200"]
    assert "a real warning" in done.stderr
    assert not [line for line in done.stderr.splitlines() if is_start_up_line(line)]
