{
  "targets": [
    {
      "target_name": "udp_batch",
      "sources": ["udp_batch.c"],
      "cflags_c": ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
