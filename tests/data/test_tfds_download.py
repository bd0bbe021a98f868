"""tensorflow-datasets downloads: every module of the download path installed and declared,
and one clear line when the network is out of reach."""

import configparser
import importlib.metadata
import json
import pathlib
import socket
import subprocess
import sys
import time

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from keras_attention.data.tfds_download import DatasetDownloadError
from keras_attention.data.tfds_download import unreachable_reason
from keras_attention.tasks.captioning.sources import load_caption_dataset
from keras_attention.tasks.image_classification.sources import load_image_classification_dataset
from keras_attention.tasks.translation.sources import load_translation_pairs

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Starts a real tfds download with every HTTP request refused at once (no network is
# used), and prints the modules it imported and the error it ended with.
_DOWNLOAD_PROBE = """
import json, sys, tempfile
import requests
import tensorflow_datasets as tfds

def refuse(*args, **kwargs):
    raise requests.exceptions.ConnectionError("refused by the test")

requests.adapters.HTTPAdapter.send = refuse
before = set(sys.modules)
try:
    tfds.builder(sys.argv[1], data_dir=tempfile.mkdtemp()).download_and_prepare()
    error = None
except Exception as exception:
    error = type(exception).__name__ + ": " + str(exception)
print(json.dumps({"error": error, "imported": sorted(set(sys.modules) - before)}))
"""


def _run_download_probe(name):
    result = subprocess.run(
        [sys.executable, "-c", _DOWNLOAD_PROBE, name],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def cifar10_download():
    return _run_download_probe("cifar10")


def test_the_download_path_imports_and_reaches_the_network(cifar10_download):
    # A missing module (importlib_resources) used to end the download before any request.
    assert cifar10_download["error"].startswith("ConnectionError: refused by the test")


def _declared_requirements():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    lines = config["options"]["install_requires"].strip().splitlines()
    return [Requirement(line.strip()) for line in lines if line.strip()]


def _requirement_closure(requirements):
    """Canonical names of the installed distributions the requirements pull in."""
    closure, pending = set(), [(requirement, "") for requirement in requirements]
    while pending:
        requirement, extra = pending.pop()
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        key = (name, tuple(sorted(requirement.extras)))
        if key in closure:
            continue
        closure.add(key)
        try:
            dependencies = importlib.metadata.requires(requirement.name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for text in dependencies:
            dependency = Requirement(text)
            for wanted in requirement.extras or {""}:
                pending.append((dependency, wanted))
    return {name for name, _ in closure}


def test_every_module_the_download_path_imports_is_declared(cifar10_download):
    declared = _requirement_closure(_declared_requirements())
    providers = importlib.metadata.packages_distributions()
    undeclared = {}
    for module in cifar10_download["imported"]:
        top = module.split(".")[0]
        for distribution in providers.get(top, []):  # the standard library has none
            if canonicalize_name(distribution) not in declared:
                undeclared.setdefault(canonicalize_name(distribution), set()).add(top)
    assert not undeclared, f"imported on the download path but not declared: {undeclared}"


@pytest.fixture
def offline(monkeypatch):
    def no_name_resolution(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_name_resolution)


@pytest.mark.parametrize(
    "load, name",
    [
        (
            lambda data_dir: load_image_classification_dataset("cifar10", 8, data_dir=data_dir),
            "cifar10",
        ),
        (
            lambda data_dir: load_caption_dataset("coco_captions", 8, data_dir=data_dir),
            "coco_captions",
        ),
        (
            lambda data_dir: load_translation_pairs(
                "ted_hrlr_translate/pt_to_en", data_dir=data_dir
            ),
            "ted_hrlr_translate/pt_to_en",
        ),
    ],
    ids=["classification", "captioning", "translation"],
)
def test_offline_download_fails_at_once_in_one_line_naming_the_data_set(
    offline, tmp_path, load, name
):
    start = time.monotonic()
    with pytest.raises(DatasetDownloadError) as raised:
        load(str(tmp_path))
    message = str(raised.value)
    assert "\n" not in message and f"cannot download {name!r}" in message
    assert "network is unreachable" in message and "could not resolve" in message
    assert "--data-dir" in message and "folder:" in message
    assert time.monotonic() - start < 60  # tfds alone retries for more than three minutes


def test_unreachable_reason_names_each_host_once(offline):
    urls = ["https://a.example/x.tgz", "https://a.example/y.tgz", "http://b.example:8080/z"]
    assert unreachable_reason(urls) == "could not resolve a.example; could not resolve b.example"
