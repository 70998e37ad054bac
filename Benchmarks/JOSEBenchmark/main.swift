print("jose-benchmark: not written yet")
