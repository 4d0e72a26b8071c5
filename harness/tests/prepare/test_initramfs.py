"""The initramfs cache key: file contents and the list, never host paths."""

from pathlib import Path

from harness.prepare import initramfs


def spec(tmp_path, module=b"ko", params=b"KSYMLAB_STRESS=0\n", where="run1"):
    d = tmp_path / where
    d.mkdir(exist_ok=True)
    (d / "mod.ko").write_bytes(module)
    (d / "params").write_bytes(params)
    return (f"dir /bin 0755 0 0\nfile /lib/modules/ksymlab_probe.ko {d / 'mod.ko'} 0644 0 0\n"
            f"file /etc/ksymlab/params {d / 'params'} 0644 0 0\n")


def test_same_contents_in_another_run_directory_hit(tmp_path):
    cpio = tmp_path / "gen_init_cpio"
    cpio.write_bytes(b"tool")
    a = initramfs.content_key(spec(tmp_path), cpio)
    assert a == initramfs.content_key(spec(tmp_path, where="run2"), cpio)


def test_any_change_misses(tmp_path):
    cpio = tmp_path / "gen_init_cpio"
    cpio.write_bytes(b"tool")
    base = initramfs.content_key(spec(tmp_path), cpio)
    assert base != initramfs.content_key(spec(tmp_path, module=b"ko2", where="m"), cpio)
    assert base != initramfs.content_key(spec(tmp_path, params=b"KSYMLAB_STRESS=5\n",
                                              where="p"), cpio)
    # the same file under another name in the guest
    assert base != initramfs.content_key(spec(tmp_path).replace("/etc/ksymlab/params",
                                                                 "/etc/params"), cpio)
    other = tmp_path / "gen_init_cpio2"
    other.write_bytes(b"tool v2")
    assert base != initramfs.content_key(spec(tmp_path), other)


def test_guest_program_key_follows_the_guest_headers(tmp_path, monkeypatch):
    """A guest program includes headers of harness/guest (ustack-frames.h): a header change
    must rebuild it, or a run would boot the binary of the old header."""
    monkeypatch.setattr(initramfs.paths, "GUEST", tmp_path)
    src = tmp_path / "prog.c"
    src.write_bytes(b'#include "frames.h"\n')
    (tmp_path / "frames.h").write_bytes(b"int level3(void);\n")
    base = initramfs.guest_program_key(src)
    assert base == initramfs.guest_program_key(src)
    (tmp_path / "frames.h").write_bytes(b"int level3(void) { return 1; }\n")
    changed = initramfs.guest_program_key(src)
    assert changed != base
    (tmp_path / "other.h").write_bytes(b"")
    assert initramfs.guest_program_key(src) not in (base, changed)
    src.write_bytes(b'#include "frames.h" /* */\n')
    assert len({base, changed, initramfs.guest_program_key(src)}) == 3


def source_params(text, tmp_path):
    """KSYMLAB_INSMOD_ARGS after the guest's sh sources `text` (busybox sh, as in the guest)."""
    import subprocess
    f = tmp_path / "params"
    f.write_text(text)
    sh = ["/bin/busybox", "sh"] if Path("/bin/busybox").exists() else ["/bin/sh"]
    p = subprocess.run([*sh, "-c", '. "$1" && printf %s "$KSYMLAB_INSMOD_ARGS"', "sh", str(f)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_insmod_args_reach_the_guest_shell_verbatim(tmp_path):
    nasty = "sym=task_prio it's $(touch pwned) `touch pwned2` \"q\"  two  spaces \\ $HOME;"
    for args in (nasty, "x' $(touch pwned3) '", "'", "", "a=1 b=2", "x='y z'"):
        text = initramfs.params_text("exports", "exports", args, 3, 0)
        assert source_params(text, tmp_path) == args
        assert "KSYMLAB_STRESS=3\n" in text
    assert not [p.name for p in tmp_path.glob("pwned*")]


def test_params_without_a_quote_are_written_as_before(tmp_path):
    """Same bytes as before the quoting fix for every text without a ', so the initramfs
    key of such a run does not change."""
    for args in ("", "a=1", "a=1 b=2", "x=$y"):
        assert initramfs.params_text("stock", "kprobe", args, 0, 1) == (
            f"KSYMLAB_VARIANT=stock\nKSYMLAB_MODE=kprobe\nKSYMLAB_INSMOD_ARGS='{args}'\n"
            "KSYMLAB_STRESS=0\nKSYMLAB_BENCH=1\n")
