"""C++/CUDA analysis with tree-sitter: CUDA API sites with their HIP names, and the hazards that
renaming does not fix (PRT7xx, PRT8xx)."""
