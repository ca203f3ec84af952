"""Which files the walk finds: each folder's .gitignore applies below it, up to the repository
root; a nested repository starts afresh; a folder named on the command line is walked even if
ignored, with only the .gitignore files inside it."""

from __future__ import annotations

import os
from pathlib import Path

from portlint.config import Settings
from portlint.discover import Walker

FILES = (
    "top.py",
    "made.gen.py",
    "a/x.py",
    "a/b/y.py",
    "a/b/skip.py",
    "a/b/c/z.py",
    "out/o.py",
    "out/deep/d.py",
    "nested/n.py",
    "nested/made.gen.py",
    "nested/skip.py",
    "nested/inner/i.py",
)
IGNORES = {
    ".gitignore": "*.gen.py\nout/\n",
    "a/.gitignore": "c/\n",
    "a/b/.gitignore": "skip.py\n",
    "nested/.gitignore": "skip.py\n",
    "out/.gitignore": "deep/\n",
}


def make_tree(root: Path) -> None:
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x = 1\n", encoding="utf-8")
    for name, text in IGNORES.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / ".git").mkdir()
    (root / "nested" / ".git").mkdir()


def walked(root: Path, given: str, respect_gitignore: bool = True) -> list[str]:
    walker = Walker(Settings(), respect_gitignore=respect_gitignore)
    found = walker.walk([root / given])
    return sorted(Path(c.path).relative_to(root).as_posix() for c in found)


def test_gitignore_files_apply_below_their_folder_up_to_the_repository(tmp_path):
    make_tree(tmp_path)
    assert walked(tmp_path, ".") == [
        "a/b/y.py",
        "a/x.py",
        # a nested repository: its own .gitignore only, not the outer *.gen.py
        "nested/inner/i.py",
        "nested/made.gen.py",
        "nested/n.py",
        "top.py",
    ]


def test_a_folder_named_on_the_command_line_is_walked_with_its_own_ignores(tmp_path):
    make_tree(tmp_path)
    assert walked(tmp_path, "out") == ["out/o.py"]
    assert walked(tmp_path, "a/b") == ["a/b/y.py"]


def test_without_gitignore_every_file_is_found(tmp_path):
    make_tree(tmp_path)
    assert len(walked(tmp_path, ".", respect_gitignore=False)) == len(FILES)


def test_a_file_names_suffix_is_the_one_splitext_gives():
    from portlint.discover import _suffix

    names = ["a.py", "a", ".bashrc", "..a.py", "...", ".cu", "a.", "a.b.c", "..", "x..py", "A.CU"]
    assert [_suffix(name) for name in names] == [os.path.splitext(name)[1] for name in names]
