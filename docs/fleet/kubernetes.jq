# Services of the itzg/minecraft Helm chart (`minecraftServer.rcon.enabled: true`) as rcon
# --targets rows. Feed it `kubectl get services --all-namespaces -o json`.
#
# The chart names the RCON Service and its Secret alike, "<fullname>-rcon" (ClusterIP by
# default, port named "rcon", 25575), labels both with app=<fullname> and release=<release>,
# and keeps the password under the Secret's key "rcon-password". The password never goes into
# the inventory: each row runs kubectl to read it when rcon starts.
.items[]
| select(.kind == "Service"
    and (.metadata.name | endswith("-rcon"))
    and ((.spec.ports // []) | any(.name == "rcon")))
| {
    name: (.metadata.namespace + "/" + (.metadata.labels.release // .metadata.name)),
    host: .spec.clusterIP,
    port: (.spec.ports[] | select(.name == "rcon") | .port),
    password_command: ("kubectl get secret --namespace " + .metadata.namespace + " "
      + .metadata.name + " -o 'jsonpath={.data.rcon-password}' | base64 -d"),
    tags: ([.metadata.namespace, .metadata.labels.release, .metadata.labels.app]
      | map(select(. != null)))
  }
