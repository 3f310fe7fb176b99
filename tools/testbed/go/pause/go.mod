module signet.local/testbed/pause

go 1.26.0

require golang.org/x/sys v0.38.0
