"""Build and deployment files: Dockerfiles, compose, Kubernetes and Helm YAML, CI steps, shell
scripts, Python dependency lists, CMake and setup.py (rules PRT9xx).

``files`` recognises the files by name (no parser import); ``analysers`` is the engine's entry
point and imports each file kind's parser only when such a file is linted.
"""
