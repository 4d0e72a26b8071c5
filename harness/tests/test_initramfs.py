"""The initramfs cache key: file contents and the list, never host paths."""

from harness.build import initramfs


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
