# Sphinx configuration of cohort's documentation (MyST Markdown; Debian 12's python3-sphinx,
# python3-myst-parser and furo). Built by scripts/docs with warnings as errors.
project = "cohort"
author = "the cohort authors"
copyright = "2026, the cohort authors"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
# Anchors for every heading down to level 3, so that links such as settings.md#per-call-dead-root-policies
# are checked by the build.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
html_theme = "furo"
html_title = "cohort"
# Internal links are checked by the build itself (-W turns a missing target into an error); no network.
linkcheck_ignore = [r"https?://.*"]
html_static_path = ["_static"]
html_css_files = ["tables.css"]
