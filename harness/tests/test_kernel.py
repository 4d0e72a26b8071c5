import shutil

import pytest

from harness import kernel, paths, variants
from harness.errors import HarnessError


@pytest.fixture
def patches(tmp_path, monkeypatch):
    root = tmp_path / "patches"
    shutil.copytree(paths.REPO / "patches", root)
    monkeypatch.setenv("KSYMLAB_PATCHES", str(root))
    return root


def test_key_is_stable_and_tracks_series(patches, tmp_path):
    tarball = tmp_path / "linux.tar.xz"
    tarball.write_bytes(b"not really a tarball")
    v = variants.VARIANTS["exports"]
    k1 = kernel.tree_key(v, tarball)
    assert k1 == kernel.tree_key(v, tarball)
    assert k1 != kernel.tree_key(variants.VARIANTS["kallsyms"], tarball)
    patch = patches / "exports" / (patches / "exports" / "series").read_text().split()[0]
    patch.write_text(patch.read_text() + "\n")
    assert kernel.tree_key(v, tarball) != k1


def test_key_tracks_tarball(patches, tmp_path):
    a, b = tmp_path / "a.tar.xz", tmp_path / "b.tar.xz"
    a.write_bytes(b"a")
    b.write_bytes(b"b")
    v = variants.VARIANTS["exports"]
    assert kernel.tree_key(v, a) != kernel.tree_key(v, b)


def test_missing_tarball_is_an_extract_error(tmp_path):
    with pytest.raises(HarnessError) as e:
        kernel.tree_key(variants.VARIANTS["exports"], tmp_path / "nope.tar.xz")
    assert e.value.step == "extract" and e.value.exit_status == 10


def test_series_naming_a_missing_patch(patches, tmp_path):
    (patches / "exports" / "series").write_text("0099-does-not-exist.patch\n")
    with pytest.raises(HarnessError) as e:
        variants.VARIANTS["exports"].patches()
    assert e.value.step == "patch" and "0099-does-not-exist.patch" in e.value.message


def test_check_config_reports_dropped_options():
    frag = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x\"\n"
    good = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x\"\n"
    assert kernel.check_config(frag, good) == []
    bad = kernel.check_config(frag, "CONFIG_B=y\nCONFIG_C=\"y\"\n")
    assert bad == ["CONFIG_A=y requested, .config has CONFIG_A=n",
                   "CONFIG_B=n requested, .config has CONFIG_B=y",
                   'CONFIG_C="x" requested, .config has CONFIG_C="y"']


def test_unknown_variant_is_usage_error():
    with pytest.raises(HarnessError) as e:
        variants.select(["exports", "nope"])
    assert e.value.exit_status == 2
