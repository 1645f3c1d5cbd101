// The programs of the real nodes' images: a pause process and a small HTTP server. Standard library only.
module ebb.dev/harness/images

go 1.24
