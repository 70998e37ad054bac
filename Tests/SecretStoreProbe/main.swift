print("SecretStoreProbe: not written yet")
