"""Writing a study's figures: each as PNG and SVG, named by the figure's key."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from matplotlib.figure import Figure

from tcplab.plots._common import new_figure

__all__ = ["PNG_DPI", "new_figure", "write_figures"]

PNG_DPI = 110
"""Resolution of the PNG files, dots per inch (the SVG files are vector graphics)."""


def write_figures(
    figures: Mapping[str, Figure], out: str | Path, png_dpi: int = PNG_DPI
) -> list[Path]:
    """Write every figure as `out/<name>.png` (at `png_dpi`) and `out/<name>.svg`, in order;
    returns the paths written. `out` must exist."""
    out = Path(out)
    written = []
    for name, fig in figures.items():
        for path, options in ((out / f"{name}.png", {"dpi": png_dpi}), (out / f"{name}.svg", {})):
            fig.savefig(path, **options)
            written.append(path)
    return written
