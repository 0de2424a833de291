"""Text-to-image models scored for faithfulness from the scene graph of each prompt
(`autocomp t2i`: docs/t2i.md)."""
