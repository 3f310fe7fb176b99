// The CNI manifest of Signet's kind node image (/kind/manifests/default-cni.yaml), for our own
// kindnetd (tools/testbed/go/kindnetd). kind applies it at cluster creation: the two marker
// comments below make kind template it and add CONTROL_PLANE_ENDPOINT (the API server on the
// node network) to the first container's env.
export const KINDNET_MANIFEST = `# would you kindly template this file
# would you kindly patch this file
# Node network agent of Signet's kind node image: routes to other nodes' Pod CIDRs, CNI config.
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: kindnet
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kindnet
rules:
  - apiGroups: [""]
    resources: ["nodes"]
    verbs: ["list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: kindnet
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: kindnet
subjects:
  - kind: ServiceAccount
    name: kindnet
    namespace: kube-system
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: kindnet
  namespace: kube-system
  labels:
    app: kindnet
    k8s-app: kindnet
spec:
  selector:
    matchLabels:
      app: kindnet
  template:
    metadata:
      labels:
        app: kindnet
        k8s-app: kindnet
    spec:
      hostNetwork: true
      nodeSelector:
        kubernetes.io/os: linux
      tolerations:
        - operator: Exists
      priorityClassName: system-node-critical
      serviceAccountName: kindnet
      containers:
        - name: kindnet-cni
          image: KINDNETD_IMAGE
          imagePullPolicy: IfNotPresent
          env:
            - name: NODE_NAME
              valueFrom:
                fieldRef:
                  fieldPath: spec.nodeName
          volumeMounts:
            - name: cni-cfg
              mountPath: /etc/cni/net.d
          resources:
            requests:
              cpu: 10m
              memory: 20Mi
          securityContext:
            privileged: false
            capabilities:
              add: ["NET_RAW", "NET_ADMIN"]
      volumes:
        - name: cni-cfg
          hostPath:
            path: /etc/cni/net.d
`;
