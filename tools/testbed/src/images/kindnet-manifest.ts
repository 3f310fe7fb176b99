// The CNI manifest of Signet's kind node image (/kind/manifests/default-cni.yaml): our own
// kindnetd (tools/testbed/go/kindnetd) for Pod networking, and kube-router's firewall for
// NetworkPolicy (as kind's own kindnet enforces NetworkPolicy with kube-network-policies, which
// needs nftables' `queue` statement, missing from these machines' kernels). kind applies it at
// cluster creation: the two marker comments below make kind template it ({{ .PodSubnet }}) and add
// CONTROL_PLANE_ENDPOINT (the API server on the node network) to the first container's env of
// every DaemonSet (kube-router ignores it).
export const KINDNET_MANIFEST = `# would you kindly template this file
# would you kindly patch this file
# Node network agent of Signet's kind node image: routes to other nodes' Pod CIDRs, CNI config;
# kube-router's firewall enforces NetworkPolicy on every node.
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
            - name: POD_SUBNET
              value: "{{ .PodSubnet }}"
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
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: kube-router
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kube-router
rules:
  - apiGroups: [""]
    resources: ["namespaces", "pods", "services", "nodes", "endpoints"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["discovery.k8s.io"]
    resources: ["endpointslices"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["networking.k8s.io"]
    resources: ["networkpolicies"]
    verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: kube-router
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: kube-router
subjects:
  - kind: ServiceAccount
    name: kube-router
    namespace: kube-system
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: kube-router
  namespace: kube-system
  labels:
    k8s-app: kube-router
spec:
  selector:
    matchLabels:
      k8s-app: kube-router
  template:
    metadata:
      labels:
        k8s-app: kube-router
    spec:
      hostNetwork: true
      nodeSelector:
        kubernetes.io/os: linux
      tolerations:
        - operator: Exists
      priorityClassName: system-node-critical
      serviceAccountName: kube-router
      containers:
        - name: kube-router
          image: KUBE_ROUTER_IMAGE
          imagePullPolicy: IfNotPresent
          # The firewall only: Pod routes are kindnetd's, Services kube-proxy's.
          args:
            - --run-firewall=true
            - --run-router=false
            - --run-service-proxy=false
            - --enable-cni=false
            - --health-port=20244
          env:
            - name: NODE_NAME
              valueFrom:
                fieldRef:
                  fieldPath: spec.nodeName
          readinessProbe:
            httpGet:
              path: /healthz
              port: 20244
            periodSeconds: 3
          resources:
            requests:
              cpu: 10m
              memory: 30Mi
          securityContext:
            privileged: false
            capabilities:
              add: ["NET_ADMIN", "NET_RAW"]
`;
