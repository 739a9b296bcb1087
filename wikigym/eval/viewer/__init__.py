"""The episode viewer: a static page per eval report, and two runs side by side
(``wikigym view``); see :mod:`wikigym.eval.viewer.page`."""

from wikigym.eval.viewer.page import (
    compare_reports,
    data_folder,
    first_difference,
    write_compare_page,
    write_run_page,
)

__all__ = [
    "compare_reports",
    "data_folder",
    "first_difference",
    "write_compare_page",
    "write_run_page",
]
