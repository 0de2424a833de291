"""Text-to-image generators: procedural (embedded, CPU) and, later, diffusers."""
