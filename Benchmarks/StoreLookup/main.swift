print("store-lookup: not written yet")
