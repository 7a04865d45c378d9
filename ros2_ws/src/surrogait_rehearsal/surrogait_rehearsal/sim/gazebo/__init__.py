"""The Gazebo rehearsal's simulator side: the bridge from Gazebo's topics to the Go2's wire (`bridge_*`) and the
MuJoCo stand-in for gz sim + ros_gz_bridge (`standin_*`), with the topics they share."""
